package io.zerorename.committer.records;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One uncompleted multipart upload, as a task record lists it: the Python reference's
 * {@code SinglePendingCommit} (version 2; field names of Hadoop's S3A {@code .pending}, part
 * ETags as strings), written field for field in the same order.
 */
public final class PendingCommit {
  public static final int VERSION = 2;

  private final String uri;
  private final String bucket;
  private final String destinationKey;
  private final String uploadId;
  private final List<String> etags;
  private final long length;
  private final long created;
  private final long saved;
  private final String jobId;
  private final String taskId;

  public PendingCommit(String uri, String bucket, String destinationKey, String uploadId,
      List<String> etags, long length, long created, long saved, String jobId, String taskId) {
    this.uri = uri;
    this.bucket = bucket;
    this.destinationKey = destinationKey;
    this.uploadId = uploadId;
    this.etags = Collections.unmodifiableList(new ArrayList<>(etags));
    this.length = length;
    this.created = created;
    this.saved = saved;
    this.jobId = jobId;
    this.taskId = taskId;
  }

  /** The pending commit of an upload of {@code url}, saved at {@code now}. */
  public static PendingCommit create(String url, String uploadId, List<String> etags,
      long length, String jobId, String taskId, long created, long now) {
    StoreUrl u = StoreUrl.parse(url);
    return new PendingCommit(u.encoded(), u.bucket(), u.key(), uploadId, etags, length,
        created > 0 ? created : now, now, jobId, taskId);
  }

  public String url() {
    String scheme = StoreUrl.parse(StoreUrl.decode(uri)).scheme();
    return StoreUrl.of(scheme, bucket, destinationKey).toString();
  }

  public String uploadId() {
    return uploadId;
  }

  public List<String> etags() {
    return etags;
  }

  public long length() {
    return length;
  }

  public Map<String, Object> toJson() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("version", (long) VERSION);
    m.put("filename", "");
    m.put("uri", uri);
    m.put("uploadId", uploadId);
    m.put("bucket", bucket);
    m.put("destinationKey", destinationKey);
    m.put("created", created);
    m.put("saved", saved);
    m.put("date", saved != 0 ? Fields.dateText(saved) : "");
    m.put("jobId", jobId);
    m.put("taskId", taskId);
    m.put("text", "");
    m.put("etags", new ArrayList<Object>(etags));
    m.put("extraData", new LinkedHashMap<String, Object>());
    m.put("iostatistics", new LinkedHashMap<String, Object>());
    m.put("length", length);
    return m;
  }

  public static PendingCommit fromJson(Object data, String path) throws RecordFormatException {
    Map<String, Object> d = Fields.mapOf(data, path, "pending commit");
    long version = Fields.integer(d, "version", path, null, 0);
    if (version != VERSION) {
      throw new RecordFormatException(path, "pending commit version " + version
          + ", expected " + VERSION);
    }
    String uri = Fields.str(d, "uri", path, true);
    String bucket = Fields.str(d, "bucket", path, false);
    String key = Fields.str(d, "destinationKey", path, true);
    String uploadId = Fields.str(d, "uploadId", path, true);
    Object raw = d.get("etags");
    if (!(raw instanceof List) || ((List<?>) raw).isEmpty()) {
      throw new RecordFormatException(path,
          "field 'etags' must be a non-empty list (one per part)");
    }
    List<String> etags = new ArrayList<>();
    int part = 0;
    for (Object e : (List<?>) raw) {
      part++;
      if (!(e instanceof String) || ((String) e).isEmpty()) {
        throw new RecordFormatException(path, "etag of part " + part
            + " is empty or not a string");
      }
      etags.add((String) e);
    }
    StoreUrl parsed;
    try {
      parsed = StoreUrl.parse(StoreUrl.decode(uri));
    } catch (IllegalArgumentException e) {
      throw new RecordFormatException(path, "field 'uri' is not a URL: " + e.getMessage());
    }
    if (!parsed.bucket().equals(bucket) || !parsed.key().equals(key)) {
      throw new RecordFormatException(path, "uri " + uri + " does not match bucket " + bucket
          + " and destinationKey " + key);
    }
    return new PendingCommit(uri, bucket, key, uploadId, etags,
        Fields.integer(d, "length", path, null, 0),
        Fields.integer(d, "created", path, 0L, 0), Fields.integer(d, "saved", path, 0L, 0),
        Fields.str(d, "jobId", path, false), Fields.str(d, "taskId", path, false));
  }
}
