"""Example-based tests of the reference committers (zerorename), on moto and LocalStore."""
