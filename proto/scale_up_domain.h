// What an unset field of the hardware schema means, for the layers that read the scenario
// before the cluster is resolved (topo::cluster_spec resolves and checks the same default).
#pragma once

#include "proto/scenario.pb.h"

namespace racksim {

// GPUs of one scale-up domain: hardware.scale_up.domain_size when set, else the node's GPUs (a
// node is its own NVLink domain). The validator refuses a domain_size set to 0 or less.
inline int scale_up_domain_gpus(const config::Hardware& hw) {
  return hw.scale_up().domain_size() > 0 ? hw.scale_up().domain_size() : hw.gpus_per_node();
}

}  // namespace racksim
