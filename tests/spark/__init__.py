"""Spark tier: PySpark writes through zerorename committers on an embedded S3 (moto)."""
