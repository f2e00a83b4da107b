// The memory report's verdict: a peak within 2 GB of the capacity fits the ledger but is called
// marginal, since the CUDA context, NCCL's buffers and fragmentation are not in the ledger.
#include <gtest/gtest.h>

#include "analysis/memory_report.h"

namespace racksim::analysis {
namespace {

MemoryLedger ledger_with_peak(double peak_bytes, double capacity_bytes) {
  MemoryLedger m;
  m.capacity_bytes = capacity_bytes;
  m.static_items.push_back({"weights", peak_bytes, ""});
  return m;
}

TEST(MemoryReport, APeakWithinTwoGigabytesOfTheCapacityIsMarginal) {
  const std::string tight = memory_text(ledger_with_peak(85.25e9, 85.52e9));
  EXPECT_NE(tight.find("fits with 0.27 GB to spare, marginal"), std::string::npos) << tight;
  const std::string roomy = memory_text(ledger_with_peak(80e9, 85.52e9));
  EXPECT_NE(roomy.find("GB: fits\n"), std::string::npos) << roomy;
  const std::string over = memory_text(ledger_with_peak(86e9, 85.52e9));
  EXPECT_NE(over.find("DOES NOT FIT"), std::string::npos) << over;
  EXPECT_NE(memory_stages_text({ledger_with_peak(85.25e9, 85.52e9)}).find("fits, marginal"),
            std::string::npos);
  EXPECT_TRUE(memory_json(ledger_with_peak(85.25e9, 85.52e9))["fits"].get<bool>());
}

}  // namespace
}  // namespace racksim::analysis
