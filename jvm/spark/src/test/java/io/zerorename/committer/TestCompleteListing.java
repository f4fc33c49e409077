package io.zerorename.committer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.zerorename.committer.records.CommittedFile;
import io.zerorename.committer.records.RecordedUpload;
import io.zerorename.committer.records.StoreUrl;
import io.zerorename.committer.stages.CompleteUploadsStage;
import io.zerorename.committer.stages.StageConfig;
import io.zerorename.committer.store.KeyListing;
import io.zerorename.committer.store.S3CommitStore;

/**
 * The job commit's completes on a store that ignores {@code If-None-Match: *} on complete
 * (Ceph RGW, as {@link FakeS3#rgw} plays it, behind the production {@link S3CommitStore}):
 * one listing of the job's keys instead of a HEAD before each complete, a page budget that
 * never costs more than those HEADs, an existing object of another writer left alone, and a
 * roll-forward that recognises what the earlier attempt completed. Counted at the server.
 */
class TestCompleteListing {
  private static final String BUCKET = "bucket";
  private static final String DEST = "s3a://bucket/out";

  private FakeS3 server;
  private S3CommitStore store;
  private final FencedStatistics stats = new FencedStatistics();

  @BeforeEach
  void rgw() throws Exception {
    StoreFencing.clearCache();
    server = FakeS3.rgw();
    store = new S3CommitStore(server.client(), "s3a", BUCKET, "fake " + UUID.randomUUID()
        + " bucket " + BUCKET);
    assertFalse(store.conditionalComplete("out/.zerorename-probe/t/"), "not measured as RGW");
    assertTrue(store.completeIgnoresCondition());
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** A task's upload of {@code out/<rel>} holding {@code data}, as a commit record names it. */
  private RecordedUpload upload(String rel, String data) {
    return TestCheckKeys.upload(server, rel, data);
  }

  private List<RecordedUpload> uploads(int n) {
    List<RecordedUpload> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(upload(String.format("part-%05d-c000.parquet", i), "file " + i));
    }
    return out;
  }

  private void other(String key, String data) {
    server.objects.put(key, bytes(data));
    server.etags.put(key, FakeS3.md5(bytes(data)));
  }

  private StageConfig config() {
    return new StageConfig.Builder().store(store)
        .layout(new FencedLayout(StoreUrl.parse(DEST), "job-list", 0)).stats(stats)
        .threads(4).build();
  }

  /** Run the stage; the requests it sent, by SDK method. */
  private Map<String, Integer> complete(List<RecordedUpload> uploads) throws Exception {
    server.calls.clear();
    new CompleteUploadsStage(config()).apply(uploads);
    return new TreeMap<>(server.calls);
  }

  @Test
  void aFreshDestinationIsOneListInsteadOfAHeadPerKey() throws Exception {
    other("elsewhere/part-00000-c000.parquet", "not under the destination");
    List<RecordedUpload> ups = uploads(12);
    Map<String, Integer> calls = complete(ups);
    assertEquals(Map.of("listObjectsV2", 1, "completeMultipartUpload", 12), calls);
    for (int i = 0; i < 12; i++) {
      assertEquals("file " + i, server.text(String.format("out/part-%05d-c000.parquet", i)));
    }
    assertEquals(1, stats.counter(FencedStatistics.COMMITTER_COMPLETE_LIST_PAGES));
    assertEquals(12, stats.counter(FencedStatistics.COMMITTER_COMPLETE_KEYS_LISTED));
    assertEquals(0, stats.counter(FencedStatistics.COMMITTER_COMPLETE_KEYS_HEADED));
    assertEquals(12, stats.counter(FencedStatistics.COMMITTER_FILES_COMMITTED));
  }

  @Test
  void theListingGoesOnWhilePagesSaveHeads() throws Exception {
    List<RecordedUpload> ups = uploads(20);
    for (int i = 0; i < 1500; i++) {  // an earlier job's files among this job's keys
      other(String.format("out/part-00009-c000.parquet.old-%04d", i), "old");
    }
    Map<String, Integer> calls = complete(ups);
    assertEquals(Map.of("listObjectsV2", 2, "completeMultipartUpload", 20), calls);
    assertEquals(20, stats.counter(FencedStatistics.COMMITTER_COMPLETE_KEYS_LISTED));
    assertEquals(1500 + 20, server.objects.size(), "objects lost or added");
  }

  @Test
  void aSpentBudgetLeavesTheRestToAHeadEachAndNeverCostsMoreThanTheHeads() throws Exception {
    List<RecordedUpload> ups = new ArrayList<>();
    for (int k = 0; k < 4; k++) {
      ups.add(upload("part-" + k + "-new", "new " + k));
      for (int i = 0; i < 1500; i++) {  // each key followed by a page and a half of others
        other(String.format("out/part-%d-old-%04d", k, i), "old");
      }
    }
    Map<String, Integer> calls = complete(ups);
    // the first page covers the first key only: one page for one key, then a HEAD each
    assertEquals(Map.of("listObjectsV2", 1, "headObject", 3, "completeMultipartUpload", 4),
        calls);
    assertTrue(calls.get("listObjectsV2") + calls.get("headObject") <= ups.size());
    assertEquals(1, stats.counter(FencedStatistics.COMMITTER_COMPLETE_KEYS_LISTED));
    assertEquals(3, stats.counter(FencedStatistics.COMMITTER_COMPLETE_KEYS_HEADED));
    for (int k = 0; k < 4; k++) {
      assertEquals("new " + k, server.text("out/part-" + k + "-new"));
    }
  }

  @Test
  void anotherWritersObjectIsNotOverwrittenAndTheJobCommitStops() throws Exception {
    List<RecordedUpload> ups = uploads(3);
    other("out/part-00001-c000.parquet", "another writer's object");
    server.calls.clear();
    JobCommitIncompleteException e = assertThrows(JobCommitIncompleteException.class,
        () -> new CompleteUploadsStage(config()).apply(ups));
    assertTrue(e.getMessage().contains("1 of 3 upload(s)"), e.getMessage());
    assertTrue(e.getCause().getMessage().contains(DEST + "/part-00001-c000.parquet"),
        e.getCause().getMessage());
    assertEquals("another writer's object", server.text("out/part-00001-c000.parquet"));
    assertEquals("file 0", server.text("out/part-00000-c000.parquet"));
    assertEquals("file 2", server.text("out/part-00002-c000.parquet"));
    assertEquals(Map.of("listObjectsV2", 1, "completeMultipartUpload", 2),
        new TreeMap<>(server.calls), "the listing answered for the existing key");
    assertTrue(server.uploads.containsKey(ups.get(1).uploadId()), "the upload is the job's");
  }

  @Test
  void aRollForwardRecognisesWhatTheEarlierAttemptCompleted() throws Exception {
    List<RecordedUpload> ups = uploads(6);
    for (RecordedUpload u : ups.subList(0, 4)) {  // the first attempt died after these
      store.complete(StoreUrl.parse(u.url()).key(), u.uploadId(), u.etags(), false);
    }
    server.calls.clear();
    List<CommittedFile> files = new CompleteUploadsStage(config()).apply(ups);
    assertEquals(Map.of("listObjectsV2", 1, "completeMultipartUpload", 2),
        new TreeMap<>(server.calls));
    assertEquals(4, stats.counter(FencedStatistics.STORE_COMPLETE_RECOVERED));
    assertEquals(6, files.size());
    for (CommittedFile f : files) {
      assertEquals(server.etags.get(StoreUrl.parse(f.url()).key()), f.etag());
      assertTrue(f.etag().endsWith("-1"), f.etag());
    }
  }

  @Test
  void anUnmeasuredStoreChecksWithAHeadAndSendsTheCondition() throws Exception {
    store = new S3CommitStore(server.client(), "s3a", BUCKET, "fake unmeasured "
        + UUID.randomUUID());
    assertFalse(store.completeIgnoresCondition());
    Map<String, Integer> calls = complete(uploads(3));
    assertEquals(Map.of("headObject", 3, "completeMultipartUpload", 3), calls);
  }

  @Test
  void aStoreThatRefusesItselfIsNeitherListedNorHeaded() throws Exception {
    server = FakeS3.aws();
    store = new S3CommitStore(server.client(), "s3a", BUCKET, "fake aws " + UUID.randomUUID());
    assertTrue(store.conditionalComplete("out/.zerorename-probe/a/"));
    assertFalse(store.completeIgnoresCondition());
    Map<String, Integer> calls = complete(uploads(3));
    assertEquals(Map.of("completeMultipartUpload", 3), calls);
  }

  @Test
  void listFromStopsAtItsLastKeyOrItsPageBudget() throws Exception {
    for (int i = 0; i < 2500; i++) {
      other(String.format("out/k-%04d", i), "x");
    }
    other("out0", "beyond the prefix");
    server.calls.clear();
    KeyListing two = store.listFrom("out/k-", "out/k-0000", "out/k-2499", 2);
    assertEquals(2, two.pages());
    assertFalse(two.complete());
    assertEquals("out/k-2000", two.coveredThrough());
    assertEquals(2000, two.entries().size());
    assertEquals("out/k-0001", two.entries().get(0).key());
    assertTrue(two.covers("out/k-1999") && two.covers("out/k-2000")
        && !two.covers("out/k-2001"));
    KeyListing early = store.listFrom("out/k-", "out/k-0999", "out/k-1010", 5);
    assertEquals(1, early.pages());
    assertTrue(early.complete());
    assertEquals(11, early.entries().size());
    assertTrue(early.covers("out/k-1010"));
    assertEquals(3, server.calls("listObjectsV2"));
  }

  @Test
  void keysOrderAsTheirUtf8Bytes() {
    // U+FF5E (3 UTF-8 bytes) sorts before U+1F600 (4 bytes), unlike their UTF-16 units
    assertTrue(KeyListing.compareKeys("out/\uFF5E", "out/\uD83D\uDE00") < 0);
    assertTrue("out/\uFF5E".compareTo("out/\uD83D\uDE00") > 0);
    assertTrue(KeyListing.compareKeys("out/a", "out/ab") < 0);
    assertEquals(0, KeyListing.compareKeys("out/a", "out/a"));
  }
}
