package io.zerorename.committer;

import org.apache.hadoop.fs.PathIOException;

/**
 * The job passed its commit point (its commit record is saved) but some uploads could not be completed now. Nothing was reverted: setting up the same job ID again rolls it forward.
 */
public class JobCommitIncompleteException extends PathIOException {
  private static final long serialVersionUID = 1L;

  public JobCommitIncompleteException(String path, String reason) {
    super(path, reason);
  }
}
