package io.zerorename.committer.store;

import org.apache.hadoop.fs.PathIOException;

/** A conditional request met an existing key (HTTP 412): another writer created it first. */
public class PreconditionFailedException extends PathIOException {
  private static final long serialVersionUID = 1L;

  public PreconditionFailedException(String path, String reason) {
    super(path, reason);
  }
}
