package io.zerorename.committer;

import org.apache.hadoop.fs.PathIOException;

/**
 * Not a failure of the output: this job ID was already committed, and job setup finished publishing it (rolled forward). Do not run its tasks again.
 */
public class JobAlreadyCommittedException extends PathIOException {
  private static final long serialVersionUID = 1L;

  public JobAlreadyCommittedException(String path, String reason) {
    super(path, reason);
  }
}
