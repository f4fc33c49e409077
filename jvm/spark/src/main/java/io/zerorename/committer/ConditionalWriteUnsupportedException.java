package io.zerorename.committer;

import org.apache.hadoop.fs.PathIOException;

/**
 * The store cannot arbitrate commits: it ignores or rejects If-None-Match: *, or conditional writes are disabled (`fs.s3a.create.conditional.enabled=false`). Raised by job setup before any output is written; use S3A's magic committer there (`auto` picks it).
 */
public class ConditionalWriteUnsupportedException extends PathIOException {
  private static final long serialVersionUID = 1L;

  public ConditionalWriteUnsupportedException(String path, String reason) {
    super(path, reason);
  }
}
