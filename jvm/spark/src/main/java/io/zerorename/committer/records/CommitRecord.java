package io.zerorename.committer.records;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The job commit record ({@code __fenced_job-<id>/commit.json}, format
 * {@value #FORMAT}): which attempt committed each task, and every upload to complete. Once it
 * exists the job is committed; it is self-contained, so rolling forward needs no other record.
 * Written as the Python reference writes it: one compact JSON object, {@code uploads} last.
 */
public final class CommitRecord {
  public static final String FORMAT = "zerorename.FencedJobCommit/1";

  private final String jobId;
  private final int jobAttempt;
  private final String destination;
  private final long committed;
  private final Map<String, String> tasks;
  private final List<RecordedUpload> uploads;
  private final List<String> records;

  public CommitRecord(String jobId, int jobAttempt, String destination, long committed,
      Map<String, String> tasks, List<RecordedUpload> uploads, List<String> records) {
    this.jobId = jobId;
    this.jobAttempt = jobAttempt;
    this.destination = destination;
    this.committed = committed;
    this.tasks = Collections.unmodifiableMap(new TreeMap<>(tasks));
    this.uploads = Collections.unmodifiableList(new ArrayList<>(uploads));
    List<String> sorted = new ArrayList<>(records);
    Collections.sort(sorted);
    this.records = Collections.unmodifiableList(sorted);
  }

  public String jobId() {
    return jobId;
  }

  public int jobAttempt() {
    return jobAttempt;
  }

  public long committed() {
    return committed;
  }

  /** Task name to the attempt that committed it. */
  public Map<String, String> tasks() {
    return tasks;
  }

  public Set<String> attempts() {
    return new HashSet<>(tasks.values());
  }

  public List<RecordedUpload> uploads() {
    return uploads;
  }

  public List<String> records() {
    return records;
  }

  public Map<String, Object> toJson() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("format", FORMAT);
    m.put("jobId", jobId);
    m.put("jobAttempt", (long) jobAttempt);
    m.put("destination", destination);
    m.put("committed", committed);
    m.put("tasks", new LinkedHashMap<String, Object>(tasks));
    m.put("records", new ArrayList<Object>(records));
    List<Object> ups = new ArrayList<>();
    for (RecordedUpload u : uploads) {
      ups.add(u.toJson());
    }
    m.put("uploads", ups);
    return m;
  }

  public byte[] toBytes() {
    return Json.compact(toJson());
  }

  /** Parse and validate: the right format and job, every upload inside {@code dest}. */
  public static CommitRecord fromBytes(byte[] data, String path, String jobId, String dest)
      throws RecordFormatException {
    Object parsed = Json.parse(data, path);
    if (!(parsed instanceof Map) || !FORMAT.equals(((Map<?, ?>) parsed).get("format"))) {
      Object got = parsed instanceof Map ? ((Map<?, ?>) parsed).get("format") : parsed;
      throw new RecordFormatException(path, "not a fenced commit record: format " + got
          + ", expected " + FORMAT);
    }
    Map<String, Object> d = Fields.mapOf(parsed, path, "commit record");
    if (jobId != null && !jobId.equals(d.get("jobId"))) {
      throw new RecordFormatException(path, "commit record of job " + d.get("jobId")
          + ", not " + jobId);
    }
    Object attempt = d.get("jobAttempt");
    Object committed = d.get("committed");
    Object tasks = d.get("tasks");
    Object uploads = d.get("uploads");
    if (!(attempt instanceof Long) || !(committed instanceof Long) || !(tasks instanceof Map)
        || !(uploads instanceof List)) {
      throw new RecordFormatException(path, "commit record needs 'jobAttempt', 'committed', "
          + "'tasks' (name -> attempt) and 'uploads'");
    }
    Map<String, String> taskMap = Fields.strMap(tasks, path, "tasks");
    List<RecordedUpload> list = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    int i = 0;
    for (Object o : (List<?>) uploads) {
      String where = path + " (upload " + i++ + ")";
      if (!(o instanceof Map)) {
        throw new RecordFormatException(where, "not a JSON object");
      }
      Map<?, ?> u = (Map<?, ?>) o;
      Object a = u.get("a");
      Object url = u.get("u");
      Object uid = u.get("i");
      Object etags = u.get("e");
      Object size = u.get("z");
      boolean ok = a instanceof String && url instanceof String && uid instanceof String
          && !((String) uid).isEmpty() && etags instanceof List && !((List<?>) etags).isEmpty()
          && size instanceof Long && (Long) size >= 0;
      List<String> tags = new ArrayList<>();
      if (ok) {
        for (Object e : (List<?>) etags) {
          ok &= e instanceof String;
          tags.add(String.valueOf(e));
        }
      }
      if (!ok) {
        throw new RecordFormatException(where, "needs 'a' (attempt), 'u' (url), 'i' (upload "
            + "id), 'e' (part etags) and 'z' (size)");
      }
      if (dest != null) {
        Destinations.relative((String) url, dest, where);
      }
      if (!seen.add((String) url)) {
        throw new RecordFormatException(path, "destination " + url
            + " is written to by more than one pending commit");
      }
      list.add(new RecordedUpload((String) a, (String) url, (String) uid, tags, (Long) size));
    }
    Object recs = d.getOrDefault("records", new ArrayList<>());
    List<String> records = new ArrayList<>();
    if (!(recs instanceof List)) {
      throw new RecordFormatException(path, "field 'records' is not a list of URLs");
    }
    for (Object r : (List<?>) recs) {
      if (!(r instanceof String)) {
        throw new RecordFormatException(path, "field 'records' is not a list of URLs");
      }
      records.add((String) r);
    }
    return new CommitRecord((String) d.get("jobId"), (int) (long) (Long) attempt,
        String.valueOf(d.get("destination")), (Long) committed, taskMap, list, records);
  }
}
