//! Generic multithreaded MCTS (work in progress).
