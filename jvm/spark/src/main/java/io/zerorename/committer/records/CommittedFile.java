package io.zerorename.committer.records;

import java.util.LinkedHashMap;
import java.util.Map;

/** One file of a committed job: its URL, size and ETag (as completed). */
public final class CommittedFile implements Comparable<CommittedFile> {
  private final String url;
  private final long size;
  private final String etag;

  public CommittedFile(String url, long size, String etag) {
    this.url = url;
    this.size = size;
    this.etag = etag;
  }

  public String url() {
    return url;
  }

  public long size() {
    return size;
  }

  public String etag() {
    return etag;
  }

  Map<String, Object> toJson() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("url", url);
    m.put("size", size);
    m.put("etag", etag);
    return m;
  }

  @Override
  public int compareTo(CommittedFile o) {
    return url.compareTo(o.url);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof CommittedFile && ((CommittedFile) o).url.equals(url)
        && ((CommittedFile) o).size == size && ((CommittedFile) o).etag.equals(etag);
  }

  @Override
  public int hashCode() {
    return url.hashCode();
  }
}
