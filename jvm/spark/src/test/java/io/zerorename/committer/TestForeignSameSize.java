package io.zerorename.committer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.zerorename.committer.records.RecordedUpload;
import io.zerorename.committer.stages.CommitJobStage;
import io.zerorename.committer.stages.CompleteUploadsStage;
import io.zerorename.committer.stages.SetupJobStage;
import io.zerorename.committer.store.MultipartEtag;
import io.zerorename.committer.store.ObjectEntry;

/**
 * Another writer's object of exactly the upload's size, written with one PUT (an ETag without
 * {@code -N}), at a key the job completes: on a store whose completed uploads always carry S3's
 * multipart ETag it is not the job's own. Before the commit point the check refuses the job
 * ({@link JobCommitRefusedException}); after it, a 412 on such an object is not taken as
 * "already completed" ({@link JobCommitIncompleteException}, the object kept).
 */
class TestForeignSameSize {

  /** The same size as part-1's "one": another writer's bytes. */
  private static final String THEIRS = "two";

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void aSameSizeSinglePutObjectRefusesTheJobBeforeTheCommitPoint() throws Exception {
    Fixture f = new Fixture("fs1");
    assertTrue(f.store.multipartEtags(), "the store gives multipart ETags");
    List<String> ids = TestCheckKeys.twoTasks(f);
    f.store.put("out/part-1", bytes(THEIRS), false);
    f.store.requests.clear();
    JobCommitRefusedException e = assertThrows(JobCommitRefusedException.class,
        () -> new CommitJobStage(f.job()).apply(null));
    assertTrue(e.getMessage().contains(Fixture.DEST + "/part-1"), e.getMessage());
    assertTrue(e.getMessage().contains("1 key(s)"), e.getMessage());
    assertNull(f.store.head(f.layout.commitRecord()), "no commit record");
    assertNull(f.store.head("out/part-0"), "nothing published");
    assertNull(f.store.head("out/_SUCCESS"));
    assertNull(f.store.requests.get("COMPLETE"), "nothing completed: " + f.store.requests);
    TestCheckKeys.abortKeepsTheirsAndARerunCommits(f, ids, bytes(THEIRS), "fs1-rerun");
  }

  @Test
  void aSameSizeObjectWrittenAfterTheCheckIsNotTakenAsCommitted() throws Exception {
    Fixture f = new Fixture("fs2");
    List<String> ids = TestCheckKeys.twoTasks(f);
    String record = f.layout.commitRecord();
    // another writer PUTs at part-1 right after the commit record: between check and complete
    f.store.afterPut = key -> {
      if (key.equals(record)) {
        f.store.afterPut = null;
        try {
          f.store.put("out/part-1", bytes(THEIRS), false);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    };
    JobCommitIncompleteException e = assertThrows(JobCommitIncompleteException.class,
        () -> new CommitJobStage(f.job()).apply(null));
    assertNull(f.store.afterPut, "the other writer wrote");
    assertTrue(e.getMessage().contains(Fixture.DEST + "/part-1"), e.getMessage());
    assertNotNull(f.store.head(record), "committed: past the commit point");
    assertEquals(0, f.stats.counter(FencedStatistics.STORE_COMPLETE_RECOVERED));
    assertEquals(THEIRS, f.store.text("out/part-1"), "the other object kept");
    assertEquals("zero", f.store.text("out/part-0"));
    assertTrue(f.store.uploads.containsKey(ids.get(1)), "part-1's upload stays pending");
    assertNull(f.store.head("out/_SUCCESS"));
    // moved away, the next attempt rolls forward and completes it
    f.store.delete(List.of("out/part-1"));
    Fixture rerun = f.attempt(1);
    assertThrows(JobAlreadyCommittedException.class,
        () -> new SetupJobStage(rerun.job()).apply(null));
    assertEquals("one", f.store.text("out/part-1"));
    assertNotNull(f.store.head("out/_SUCCESS"));
  }

  private static boolean holds(String etag, long size, List<String> partEtags,
      boolean multipartEtags) {
    RecordedUpload u = new RecordedUpload("attempt", "s3a://b/k", "id", partEtags, 9);
    return CompleteUploadsStage.holds(new ObjectEntry("k", size, etag, 0), u, multipartEtags);
  }

  /** The rule, case by case (the Python reference's test_holds, the same table). */
  @Test
  void holdsDecidesByTheEtagWhereItTells() {
    String a = "0".repeat(31) + "a";
    String b = "0".repeat(31) + "b";
    String kms = "not-an-md5-part-etag";  // SSE-KMS part ETags are not the parts' MD5s
    assertFalse(holds("single0put0etag", 9, List.of(a), true), "one PUT: foreign");
    assertTrue(holds("single0put0etag", 9, List.of(a), false), "the size rule");
    assertFalse(holds("single0put0etag", 8, List.of(a), false), "another size");
    assertTrue(holds(MultipartEtag.of(List.of(a, b)), 9, List.of(a, b), true), "its own");
    assertTrue(holds("\"" + MultipartEtag.of(List.of(a, b)) + "\"", 9, List.of(a, b), true),
        "its own, quoted");
    assertFalse(holds(MultipartEtag.of(List.of(b, a)), 9, List.of(a, b), true), "other parts");
    assertFalse(holds("feedface-2", 9, List.of(kms), true), "2 parts, the upload has 1");
    assertFalse(holds("feedface-2", 9, List.of(kms), false), "the part count, everywhere");
    assertTrue(holds("feedface-1", 9, List.of(kms), true), "1 part, ETag not computable");
    assertFalse(holds("feedface-12345678901", 9, List.of(kms), false), "no such part count");
  }
}
