//! The Emergo bot service (work in progress).
