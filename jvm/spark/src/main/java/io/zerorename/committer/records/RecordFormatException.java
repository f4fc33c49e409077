package io.zerorename.committer.records;

import org.apache.hadoop.fs.PathIOException;

/**
 * A record (task record, commit record, {@code _SUCCESS}, S3A {@code .pending}) that cannot be
 * read: the message names the record's URL and what is wrong with it. The Python reference
 * raises {@code FormatError} for the same cases.
 */
public class RecordFormatException extends PathIOException {
  private static final long serialVersionUID = 1L;

  public RecordFormatException(String path, String reason) {
    super(path, reason);
  }
}
