package io.zerorename.committer;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.zerorename.committer.records.Json;
import io.zerorename.committer.records.StoreUrl;
import io.zerorename.committer.stages.StageConfig;

/** A job on {@code s3a://bucket/out} over an {@link InMemoryCommitStore}. */
final class Fixture {
  static final String DEST = "s3a://bucket/out";
  final InMemoryCommitStore store;
  final String jobId;
  final int jobAttempt;
  final FencedLayout layout;
  final FencedStatistics stats = new FencedStatistics();

  Fixture(String jobId) {
    this(jobId, 0, new InMemoryCommitStore());
    StoreFencing.clearCache();
  }

  private Fixture(String jobId, int jobAttempt, InMemoryCommitStore store) {
    this.jobId = jobId;
    this.jobAttempt = jobAttempt;
    this.store = store;
    this.layout = new FencedLayout(StoreUrl.parse(DEST), jobId, jobAttempt);
  }

  /** Another job on the same store (its store check already done in this JVM). */
  Fixture(String jobId, InMemoryCommitStore store) {
    this(jobId, 0, store);
  }

  /** Another attempt of the job (a rerun after a driver died), on the same store. */
  Fixture attempt(int n) {
    return new Fixture(jobId, n, store);
  }

  StageConfig.Builder builder() {
    return new StageConfig.Builder().store(store).layout(layout).stats(stats)
        .clock(() -> store.now).hostname("test-host").committerClass("test.Committer")
        .threads(4).jobIdSource("test");
  }

  StageConfig job() {
    return builder().build();
  }

  static String taskName(int task) {
    return String.format("task_jt_0001_m_%06d", task);
  }

  static String attemptId(int task, int attempt) {
    return String.format("attempt_jt_0001_m_%06d_%d", task, attempt);
  }

  StageConfig task(int task, int attempt) {
    return builder().task(taskName(task), attemptId(task, attempt), attempt).build();
  }

  /**
   * What S3A leaves for a file written under a task attempt's magic path: an uncompleted
   * upload of its final key, the {@code .pending} record (etags as objects) and a 0-byte
   * marker. Returns the upload ID.
   */
  String write(int task, int attempt, String rel, String content) {
    byte[] data = content.getBytes(StandardCharsets.UTF_8);
    String key = layout.destPrefix() + rel;
    String id = store.upload(key, data);
    String work = layout.workDir(attemptId(task, attempt)) + "/" + rel;
    Map<String, Object> pending = new LinkedHashMap<>();
    pending.put("version", 2L);
    pending.put("uri", "s3a://bucket/" + work);
    pending.put("uploadId", id);
    pending.put("bucket", "bucket");
    pending.put("destinationKey", key);
    pending.put("created", 1L);
    List<Object> etags = new ArrayList<>();
    Map<String, Object> tag = new LinkedHashMap<>();
    tag.put("etag", InMemoryCommitStore.md5(data));
    etags.add(tag);
    pending.put("etags", etags);
    pending.put("length", (long) data.length);
    try {
      store.put(work + ".pending", Json.compact(pending), false);
      store.put(work, new byte[0], false);
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
    return id;
  }
}
