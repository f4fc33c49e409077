package io.zerorename.committer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.zerorename.committer.store.PreconditionFailedException;
import io.zerorename.committer.store.S3CommitStore;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.UploadPartRequest;

/**
 * The S3 store on a server whose CompleteMultipartUpload ignores {@code If-None-Match: *} and
 * answers with an empty ETag (Ceph RGW 16.2, as {@link FakeS3#rgw} plays it), and on one that
 * does neither (AWS): the job commit's conditional complete never overwrites an existing
 * object, and the ETag it records is the object's.
 */
class TestS3CommitStore {
  private static final String BUCKET = "bucket";

  @BeforeEach
  void forget() {
    StoreFencing.clearCache();
  }

  private static S3CommitStore store(FakeS3 server) {
    return new S3CommitStore(server.client(), "s3a", BUCKET, "fake " + UUID.randomUUID()
        + " bucket " + BUCKET);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** An upload of {@code key} with one part holding {@code data}: (upload ID, part ETag). */
  private static String[] upload(FakeS3 server, String key, String data) {
    S3Client s3 = server.client();
    String id = s3.createMultipartUpload(CreateMultipartUploadRequest.builder().bucket(BUCKET)
        .key(key).build()).uploadId();
    String etag = s3.uploadPart(UploadPartRequest.builder().bucket(BUCKET).key(key)
        .uploadId(id).partNumber(1).build(), RequestBody.fromBytes(bytes(data))).eTag();
    return new String[] {id, etag};
  }

  @Test
  void aConditionalCompleteOverAnExistingKeyIsRefusedWhereTheServerWouldOverwrite()
      throws Exception {
    FakeS3 server = FakeS3.rgw();
    S3CommitStore store = store(server);
    assertFalse(store.conditionalComplete("out/.zerorename-probe/a/"));
    assertTrue(server.objects.isEmpty() && server.uploads.isEmpty(), "the check left "
        + server.objects.keySet() + " and " + server.uploads.size() + " upload(s)");
    store.put("out/part-0", bytes("another tool's"), false);
    String[] ours = upload(server, "out/part-0", "ours");
    PreconditionFailedException e = assertThrows(PreconditionFailedException.class,
        () -> store.complete("out/part-0", ours[0], List.of(ours[1]), true));
    assertTrue(e.getMessage().contains("s3a://bucket/out/part-0")
        && e.getMessage().contains("ignores If-None-Match on complete-multipart"),
        e.getMessage());
    assertEquals("another tool's", server.text("out/part-0"), "overwritten");
    assertTrue(server.uploads.containsKey(ours[0]), "the refused upload is the caller's");
  }

  @Test
  void anUnmeasuredServerIsCheckedWithAHeadToo() throws Exception {
    FakeS3 server = FakeS3.rgw();
    S3CommitStore store = store(server);
    store.put("out/part-1", bytes("theirs"), false);
    String[] ours = upload(server, "out/part-1", "ours");
    assertThrows(PreconditionFailedException.class,
        () -> store.complete("out/part-1", ours[0], List.of(ours[1]), true));
    assertEquals("theirs", server.text("out/part-1"));
  }

  @Test
  void aServerThatHonoursTheConditionIsLeftToRefuse() throws Exception {
    FakeS3 server = FakeS3.aws();
    S3CommitStore store = store(server);
    assertTrue(store.conditionalComplete("out/.zerorename-probe/b/"));
    assertTrue(server.objects.isEmpty() && server.uploads.isEmpty());
    store.put("out/part-2", bytes("theirs"), false);
    String[] ours = upload(server, "out/part-2", "ours");
    int heads = server.calls("headObject");
    assertThrows(PreconditionFailedException.class,
        () -> store.complete("out/part-2", ours[0], List.of(ours[1]), true));
    assertEquals(heads, server.calls("headObject"), "a HEAD where the server checks itself");
    assertEquals("theirs", server.text("out/part-2"));
  }

  @Test
  void anEmptyEtagFromCompleteIsDerivedFromTheParts() throws Exception {
    FakeS3 server = FakeS3.rgw();
    S3CommitStore store = store(server);
    assertFalse(store.conditionalComplete("out/.zerorename-probe/c/"));
    String[] ours = upload(server, "out/part-3", "ours");
    int heads = server.calls("headObject");
    String etag = store.complete("out/part-3", ours[0], List.of(ours[1]), true);
    assertEquals(server.etags.get("out/part-3"), etag);
    assertTrue(etag.endsWith("-1"), etag);
    assertEquals(heads + 1, server.calls("headObject"), "only the existence check: "
        + "the ETag is derived, not asked for");
    assertEquals("ours", server.text("out/part-3"));
  }

  @Test
  void theStoreCheckOfJobSetupMeasuresTheCompleteCondition() throws Exception {
    FakeS3 server = FakeS3.rgw();
    S3CommitStore store = store(server);
    StoreFencing.Decision d = StoreFencing.decide(store, "out/", true);
    assertEquals(StoreFencing.Support.FENCES, d.support());
    int completes = server.calls("completeMultipartUpload");
    assertEquals(1, completes, "the store check did not try a conditional complete");
    assertTrue(server.objects.isEmpty() && server.uploads.isEmpty(), "the check left "
        + server.objects.keySet());
    assertFalse(store.conditionalComplete("elsewhere/"), "measured again");
    assertEquals(completes, server.calls("completeMultipartUpload"));
  }
}
