package io.zerorename.committer;

import org.apache.hadoop.fs.PathIOException;

/**
 * The job commit was refused before its commit point: a key it would complete holds an object
 * this job did not write (another writer's). Nothing is committed and nothing was published:
 * aborting the job aborts every upload and leaves that object as it is; move the object away,
 * or write elsewhere, and rerun the job.
 */
public class JobCommitRefusedException extends PathIOException {
  private static final long serialVersionUID = 1L;

  public JobCommitRefusedException(String path, String reason) {
    super(path, reason);
  }
}
