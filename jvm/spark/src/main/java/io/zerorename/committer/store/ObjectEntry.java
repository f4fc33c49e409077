package io.zerorename.committer.store;

/** An object as a listing or HEAD shows it. */
public final class ObjectEntry {
  private final String key;
  private final long size;
  private final String etag;
  private final long modifiedMillis;

  public ObjectEntry(String key, long size, String etag, long modifiedMillis) {
    this.key = key;
    this.size = size;
    this.etag = etag;
    this.modifiedMillis = modifiedMillis;
  }

  public String key() {
    return key;
  }

  public long size() {
    return size;
  }

  /** The ETag without quotes. */
  public String etag() {
    return etag;
  }

  public long modifiedMillis() {
    return modifiedMillis;
  }

  @Override
  public String toString() {
    return key + " (" + size + " bytes)";
  }
}
