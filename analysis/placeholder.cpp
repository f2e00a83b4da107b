// Keeps the analysis library non-empty while it is being written.
