package io.zerorename.committer;

/**
 * The store refuses a second If-None-Match: * PUT, but let two or more racing writers win one key when measured: two attempts of one task could both commit. Raised by job setup unless `fs.zerorename.fenced.store-check=warn`.
 */
public class RacyConditionalWritesException extends ConditionalWriteUnsupportedException {
  private static final long serialVersionUID = 1L;

  public RacyConditionalWritesException(String path, String reason) {
    super(path, reason);
  }
}
