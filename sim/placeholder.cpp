// Keeps the sim library non-empty while it is being written.
