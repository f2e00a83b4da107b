// Keeps the topologies library non-empty while it is being written.
