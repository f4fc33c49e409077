package io.zerorename.committer.store;

import org.apache.hadoop.fs.PathIOException;

/** A request the store refused: its HTTP status and S3 error code, with the path. */
public class StoreRequestException extends PathIOException {
  private static final long serialVersionUID = 1L;
  private final int status;
  private final String code;

  public StoreRequestException(String path, String reason, int status, String code,
      Throwable cause) {
    super(path, reason, cause);
    this.status = status;
    this.code = code == null ? "" : code;
  }

  public int status() {
    return status;
  }

  public String code() {
    return code;
  }

  /** Did the store refuse the conditional header itself (400/501, NotImplemented...)? */
  public boolean rejectsCondition() {
    return status == 400 || status == 501 || code.equals("NotImplemented")
        || code.equals("InvalidArgument");
  }
}
