// The web board (being built).
