package io.zerorename.committer.records;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** One uncompleted upload named by a commit record: everything needed to complete it. */
public final class RecordedUpload {
  private final String attemptId;
  private final String url;
  private final String uploadId;
  private final List<String> etags;
  private final long size;

  public RecordedUpload(String attemptId, String url, String uploadId, List<String> etags,
      long size) {
    this.attemptId = attemptId;
    this.url = url;
    this.uploadId = uploadId;
    this.etags = Collections.unmodifiableList(new ArrayList<>(etags));
    this.size = size;
  }

  public String attemptId() {
    return attemptId;
  }

  public String url() {
    return url;
  }

  public String uploadId() {
    return uploadId;
  }

  public List<String> etags() {
    return etags;
  }

  public long size() {
    return size;
  }

  Map<String, Object> toJson() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("a", attemptId);
    m.put("u", url);
    m.put("i", uploadId);
    m.put("e", new ArrayList<Object>(etags));
    m.put("z", size);
    return m;
  }
}
