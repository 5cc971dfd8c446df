"""Speed and quality benchmarks with their recorded results (see README.md)."""
