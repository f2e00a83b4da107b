// Keeps the app library non-empty while it is being written.
