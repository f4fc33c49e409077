package io.zerorename.committer.stages;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import io.zerorename.committer.FencedLayout;
import io.zerorename.committer.records.Json;
import io.zerorename.committer.records.PendingCommit;
import io.zerorename.committer.records.RecordFormatException;
import io.zerorename.committer.store.CommitStore;
import io.zerorename.committer.store.LocalCommitStore;
import io.zerorename.committer.store.ObjectEntry;

/**
 * What a task attempt wrote: one uncompleted multipart upload of each file's final key, as
 * S3A's in-memory magic tracker holds them in this JVM ({@link StageConfig#trackedUploads}: no
 * request), or else as the {@code .pending} records S3A left in the attempt's work directory
 * (one LIST, one GET per file), turned into the pending commits of the task record. S3A's
 * {@code .pending} JSON has part ETags as objects ({@code {"etag": ...}}); the task record
 * lists them as strings, as the Python reference does.
 */
public final class TaskOutput {

  /** One file of the attempt: its pending commit and the work objects S3A left for it. */
  public static final class File {
    private final PendingCommit commit;
    private final List<String> workKeys;

    File(PendingCommit commit, List<String> workKeys) {
      this.commit = commit;
      this.workKeys = Collections.unmodifiableList(workKeys);
    }

    public PendingCommit commit() {
      return commit;
    }

    /** The {@code .pending} record and S3A's 0-byte marker of the file. */
    public List<String> workKeys() {
      return workKeys;
    }
  }

  private TaskOutput() {
  }

  /** Whether {@link #scan} makes the attempt's uploads, in its task commit ({@code file://}'s
   *  emulated uploads), rather than finding those S3A sent as each file was closed. */
  public static boolean uploadsAtTaskCommit(StageConfig config) {
    return config.store() instanceof LocalCommitStore;
  }

  /** Has the attempt written anything? */
  public static boolean any(StageConfig config, String attemptId) throws IOException {
    for (ObjectEntry e : config.store().list(config.layout().workDir(attemptId) + "/")) {
      if (!isChecksum(e.key())) {
        return true;
      }
    }
    return false;
  }

  private static boolean isChecksum(String key) {
    String name = key.substring(key.lastIndexOf('/') + 1);
    return name.startsWith(".") && name.endsWith(".crc");
  }

  /** Every file of the attempt {@code attemptId} (from memory, or one LIST and one GET per
   *  file). */
  public static List<File> scan(StageConfig config, String attemptId) throws IOException {
    FencedLayout layout = config.layout();
    CommitStore store = config.store();
    if (store instanceof LocalCommitStore) {
      return scanLocal(config, (LocalCommitStore) store, attemptId);
    }
    if (config.trackedUploads() != null) {
      return tracked(config, attemptId);
    }
    String dir = layout.workDir(attemptId) + "/";
    List<File> files = new ArrayList<>();
    List<ObjectEntry> listed = store.list(dir);
    java.util.Set<String> keys = new java.util.HashSet<>();
    for (ObjectEntry e : listed) {
      keys.add(e.key());
    }
    for (ObjectEntry e : listed) {
      if (!e.key().endsWith(FencedLayout.MAGIC_PENDING)) {
        continue;
      }
      byte[] data;
      try {
        data = store.get(e.key());
      } catch (FileNotFoundException gone) {
        continue; // an abort of this attempt removed it meanwhile
      }
      PendingCommit commit = fromS3A(data, layout.url(e.key()), config, attemptId);
      List<String> work = new ArrayList<>();
      work.add(e.key());
      String marker = e.key().substring(0, e.key().length() - FencedLayout.MAGIC_PENDING.length());
      if (keys.contains(marker)) {
        work.add(marker);
      }
      files.add(new File(commit, work));
    }
    return files;
  }

  /** The attempt's files as S3A's in-memory tracker holds them: nothing in the work
   *  directory to read or delete. */
  private static List<File> tracked(StageConfig config, String attemptId) {
    List<File> files = new ArrayList<>();
    long now = config.now();
    for (TrackedUploads.Upload u : config.trackedUploads().uploads(attemptId,
        config.layout().dest().bucket(), config.layout().workDir(attemptId))) {
      long created = u.createdMillis() > 0 ? u.createdMillis() : now;
      files.add(new File(PendingCommit.create(config.layout().url(u.key()), u.uploadId(),
          u.etags(), u.length(), config.jobId(), attemptId, created, now), new ArrayList<>()));
    }
    return files;
  }

  /**
   * On a local file system the task's files are plain files in its work directory: each
   * becomes the one part of an upload of its final key (moved, not copied), laid out as the
   * Python reference's local store lays out uploads. Hadoop's {@code .crc} files are dropped.
   */
  private static List<File> scanLocal(StageConfig config, LocalCommitStore store,
      String attemptId) throws IOException {
    FencedLayout layout = config.layout();
    String dir = layout.workDir(attemptId) + "/";
    List<File> files = new ArrayList<>();
    List<String> checksums = new ArrayList<>();
    for (ObjectEntry e : store.list(dir)) {
      if (isChecksum(e.key())) {
        checksums.add(e.key());
        continue;
      }
      String key = layout.destPrefix() + e.key().substring(dir.length());
      String[] upload = store.uploadFile(key, java.nio.file.Paths.get("/" + e.key()));
      long now = config.now();
      files.add(new File(PendingCommit.create(layout.url(key), upload[0], List.of(upload[1]),
          e.size(), config.jobId(), attemptId, now, now), new ArrayList<>()));
    }
    if (!checksums.isEmpty()) {
      store.delete(checksums);
    }
    return files;
  }

  /** Every work object of the attempt, whatever it is (for abort); none to list when S3A
   *  keeps the attempt's uploads in memory (it wrote nothing there). */
  public static List<String> workKeys(StageConfig config, String attemptId) throws IOException {
    List<String> out = new ArrayList<>();
    if (config.trackedUploads() != null && !(config.store() instanceof LocalCommitStore)) {
      return out;
    }
    for (ObjectEntry e : config.store().list(config.layout().workDir(attemptId) + "/")) {
      out.add(e.key());
    }
    return out;
  }

  /** A pending commit from S3A's {@code .pending} JSON. */
  static PendingCommit fromS3A(byte[] data, String path, StageConfig config, String attemptId)
      throws RecordFormatException {
    Object parsed = Json.parse(data, path);
    if (!(parsed instanceof Map)) {
      throw new RecordFormatException(path, "not an S3A pending commit (a JSON object)");
    }
    Map<?, ?> d = (Map<?, ?>) parsed;
    Object key = d.get("destinationKey");
    Object uploadId = d.get("uploadId");
    Object etags = d.get("etags");
    Object length = d.get("length");
    if (!(key instanceof String) || !(uploadId instanceof String) || !(etags instanceof List)
        || ((List<?>) etags).isEmpty() || !(length instanceof Long)) {
      throw new RecordFormatException(path, "S3A pending commit needs 'destinationKey', "
          + "'uploadId', 'etags' and 'length'");
    }
    List<String> tags = new ArrayList<>();
    for (Object t : (List<?>) etags) {
      Object tag = t instanceof Map ? ((Map<?, ?>) t).get("etag") : t;
      if (!(tag instanceof String) || ((String) tag).isEmpty()) {
        throw new RecordFormatException(path, "S3A pending commit has a part without an etag");
      }
      tags.add((String) tag);
    }
    long now = config.now();
    Object created = d.get("created");
    long createdMillis = created instanceof Long ? (Long) created : now;
    return PendingCommit.create(config.layout().url((String) key), (String) uploadId, tags,
        (Long) length, config.jobId(), attemptId, createdMillis, now);
  }
}
