package io.zerorename.committer.records;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The JSON {@code _SUCCESS} of a fenced job, as the Python reference writes it (Hadoop's
 * {@code SuccessData} fields, indented by 2, then {@value #FILES_KEY}: every committed file,
 * size and ETag). {@code filenames} is Hadoop's sample of at most {@value #FILE_LIMIT} names.
 */
public final class SuccessData {
  public static final String NAME = "org.apache.hadoop.fs.s3a.commit.files.SuccessData/1";
  public static final String FILES_KEY = "zerorename.fenced.files";
  public static final int FILE_LIMIT = 100;

  private final String committer;
  private final String jobId;
  private final String jobIdSource;
  private final long timestamp;
  private final String hostname;
  private final String description;
  private final boolean success;
  private final List<String> filenames;
  private final Map<String, Long> metrics;
  private final Map<String, String> diagnostics;
  private final Map<String, Object> iostatistics;
  private final String stage;
  private final List<CommittedFile> files;

  public SuccessData(String committer, String jobId, String jobIdSource, long timestamp,
      String hostname, String description, boolean success, List<String> filenames,
      Map<String, Long> metrics, Map<String, String> diagnostics,
      Map<String, Object> iostatistics, String stage, List<CommittedFile> files) {
    this.committer = committer;
    this.jobId = jobId;
    this.jobIdSource = jobIdSource;
    this.timestamp = timestamp;
    this.hostname = hostname;
    this.description = description;
    this.success = success;
    this.filenames = Collections.unmodifiableList(new ArrayList<>(filenames));
    this.metrics = Collections.unmodifiableMap(new TreeMap<>(metrics));
    this.diagnostics = Collections.unmodifiableMap(new TreeMap<>(diagnostics));
    this.iostatistics = iostatistics;
    this.stage = stage;
    List<CommittedFile> sorted = new ArrayList<>(files);
    Collections.sort(sorted);
    this.files = Collections.unmodifiableList(sorted);
  }

  public String committer() {
    return committer;
  }

  public String jobId() {
    return jobId;
  }

  public boolean success() {
    return success;
  }

  public Map<String, String> diagnostics() {
    return diagnostics;
  }

  public Map<String, Long> metrics() {
    return metrics;
  }

  public List<CommittedFile> files() {
    return files;
  }

  /** A copy with one more diagnostic. */
  public SuccessData withDiagnostic(String key, String value) {
    Map<String, String> d = new TreeMap<>(diagnostics);
    d.put(key, value);
    return new SuccessData(committer, jobId, jobIdSource, timestamp, hostname, description,
        success, filenames, metrics, d, iostatistics, stage, files);
  }

  public Map<String, Object> toJson() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("name", NAME);
    m.put("timestamp", timestamp);
    m.put("date", Fields.dateText(timestamp));
    m.put("hostname", hostname);
    m.put("committer", committer);
    m.put("description", description);
    m.put("jobId", jobId);
    m.put("jobIdSource", jobIdSource);
    m.put("metrics", new LinkedHashMap<String, Object>(metrics));
    m.put("diagnostics", new LinkedHashMap<String, Object>(diagnostics));
    m.put("filenames", new ArrayList<Object>(
        filenames.subList(0, Math.min(FILE_LIMIT, filenames.size()))));
    m.put("iostatistics", iostatistics);
    m.put("success", success);
    m.put("state", success ? "SUCCEEDED" : "FAILED");
    m.put("stage", stage);
    List<Object> list = new ArrayList<>();
    for (CommittedFile f : files) {
      list.add(f.toJson());
    }
    m.put(FILES_KEY, list);
    return m;
  }

  public byte[] toBytes() {
    return Json.indented(toJson());
  }

  /** Parse a fenced {@code _SUCCESS} (either implementation's). */
  public static SuccessData fromBytes(byte[] data, String path) throws RecordFormatException {
    Map<String, Object> d = Fields.mapOf(Json.parse(data, path), path, "_SUCCESS file");
    if (!NAME.equals(d.get("name"))) {
      throw new RecordFormatException(path, "incompatible file format: name is "
          + d.get("name") + ", expected " + NAME);
    }
    List<String> filenames = new ArrayList<>();
    Object names = d.getOrDefault("filenames", new ArrayList<>());
    if (!(names instanceof List)) {
      throw new RecordFormatException(path, "field 'filenames' is not a list of strings");
    }
    for (Object n : (List<?>) names) {
      filenames.add(String.valueOf(n));
    }
    Map<String, Long> metrics = new TreeMap<>();
    for (Map.Entry<String, Object> e : Fields.objectMap(d.get("metrics"), path, "metrics")
        .entrySet()) {
      if (!(e.getValue() instanceof Long)) {
        throw new RecordFormatException(path, "field 'metrics' must map names to integers");
      }
      metrics.put(e.getKey(), (Long) e.getValue());
    }
    Object success = d.getOrDefault("success", Boolean.TRUE);
    if (!(success instanceof Boolean)) {
      throw new RecordFormatException(path, "field 'success' is not a boolean");
    }
    List<CommittedFile> files = new ArrayList<>();
    Object raw = d.get(FILES_KEY);
    if (!(raw instanceof List)) {
      throw new RecordFormatException(path, "field '" + FILES_KEY + "' is missing: not "
          + "written by the fenced committer");
    }
    int i = 0;
    for (Object o : (List<?>) raw) {
      Map<String, Object> f = Fields.mapOf(o, path + " (file " + i++ + ")", "committed file");
      files.add(new CommittedFile(Fields.str(f, "url", path, true),
          Fields.integer(f, "size", path, null, 0), Fields.str(f, "etag", path, false)));
    }
    return new SuccessData(Fields.str(d, "committer", path, false),
        Fields.str(d, "jobId", path, false), Fields.str(d, "jobIdSource", path, false),
        Fields.integer(d, "timestamp", path, 0L, 0), Fields.str(d, "hostname", path, false),
        Fields.str(d, "description", path, false), (Boolean) success, filenames, metrics,
        Fields.strMap(d.get("diagnostics"), path, "diagnostics"),
        Fields.objectMap(d.get("iostatistics"), path, "iostatistics"),
        Fields.str(d, "stage", path, false), files);
  }
}
