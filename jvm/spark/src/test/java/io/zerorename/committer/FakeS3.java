package io.zerorename.committer;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.AbortMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.AbortMultipartUploadResponse;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadResponse;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadResponse;
import software.amazon.awssdk.services.s3.model.DeleteObjectsRequest;
import software.amazon.awssdk.services.s3.model.DeleteObjectsResponse;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectRequest;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;
import software.amazon.awssdk.services.s3.model.UploadPartRequest;
import software.amazon.awssdk.services.s3.model.UploadPartResponse;

/**
 * An S3 server in memory behind the AWS SDK's {@link S3Client} interface, for the requests
 * {@code S3CommitStore} sends, with the two behaviours that tell Ceph RGW 16.2 from AWS:
 * {@code ignoreCompleteCondition} (CompleteMultipartUpload overwrites despite {@code
 * If-None-Match: *}) and {@code emptyCompleteEtag} (its answer carries no ETag). PUT honours
 * {@code If-None-Match: *} (412), as both do. Counts requests by operation.
 */
final class FakeS3 implements InvocationHandler {
  final boolean ignoreCompleteCondition;
  final boolean emptyCompleteEtag;
  final TreeMap<String, byte[]> objects = new TreeMap<>();
  final Map<String, String> etags = new HashMap<>();
  final Map<String, Map<Integer, byte[]>> uploads = new HashMap<>();
  final Map<String, Integer> calls = new TreeMap<>();

  private FakeS3(boolean ignoreCompleteCondition, boolean emptyCompleteEtag) {
    this.ignoreCompleteCondition = ignoreCompleteCondition;
    this.emptyCompleteEtag = emptyCompleteEtag;
  }

  /** AWS (and moto): complete honours If-None-Match and answers with the ETag. */
  static FakeS3 aws() {
    return new FakeS3(false, false);
  }

  /** Ceph RGW 16.2: complete ignores If-None-Match and answers with an empty ETag. */
  static FakeS3 rgw() {
    return new FakeS3(true, true);
  }

  S3Client client() {
    return (S3Client) Proxy.newProxyInstance(S3Client.class.getClassLoader(),
        new Class<?>[] {S3Client.class}, this);
  }

  int calls(String op) {
    return calls.getOrDefault(op, 0);
  }

  String text(String key) {
    byte[] b = objects.get(key);
    return b == null ? null : new String(b, StandardCharsets.UTF_8);
  }

  @Override
  public synchronized Object invoke(Object proxy, Method m, Object[] args) throws Throwable {
    calls.merge(m.getName(), 1, Integer::sum);
    switch (m.getName()) {
      case "putObject":
        return put((PutObjectRequest) args[0], (RequestBody) args[1]);
      case "getObjectAsBytes":
        return get(((GetObjectRequest) args[0]).key());
      case "headObject":
        return head(((HeadObjectRequest) args[0]).key());
      case "createMultipartUpload": {
        String id = UUID.randomUUID().toString();
        uploads.put(id, new TreeMap<>());
        return CreateMultipartUploadResponse.builder().uploadId(id).build();
      }
      case "uploadPart": {
        UploadPartRequest r = (UploadPartRequest) args[0];
        byte[] data = bytes((RequestBody) args[1]);
        upload(r.uploadId()).put(r.partNumber(), data);
        return UploadPartResponse.builder().eTag("\"" + md5(data) + "\"").build();
      }
      case "completeMultipartUpload":
        return complete((CompleteMultipartUploadRequest) args[0]);
      case "abortMultipartUpload":
        upload(((AbortMultipartUploadRequest) args[0]).uploadId());
        uploads.remove(((AbortMultipartUploadRequest) args[0]).uploadId());
        return AbortMultipartUploadResponse.builder().build();
      case "deleteObjects":
        for (ObjectIdentifier id : ((DeleteObjectsRequest) args[0]).delete().objects()) {
          objects.remove(id.key());
          etags.remove(id.key());
        }
        return DeleteObjectsResponse.builder().build();
      case "listObjectsV2":
        return list((ListObjectsV2Request) args[0]);
      case "close":
        return null;
      default:
        if (m.isDefault()) {  // the SDK's paginators: built on the methods above
          return InvocationHandler.invokeDefault(proxy, m, args);
        }
        throw new UnsupportedOperationException("FakeS3: " + m.getName());
    }
  }

  private static S3Exception error(int status, String code) {
    return (S3Exception) S3Exception.builder().statusCode(status).message(code)
        .awsErrorDetails(AwsErrorDetails.builder().errorCode(code).build()).build();
  }

  private Map<Integer, byte[]> upload(String id) {
    Map<Integer, byte[]> parts = uploads.get(id);
    if (parts == null) {
      throw error(404, "NoSuchUpload");
    }
    return parts;
  }

  private PutObjectResponse put(PutObjectRequest r, RequestBody body) {
    if ("*".equals(r.ifNoneMatch()) && objects.containsKey(r.key())) {
      throw error(412, "PreconditionFailed");
    }
    byte[] data = bytes(body);
    objects.put(r.key(), data);
    etags.put(r.key(), md5(data));
    return PutObjectResponse.builder().eTag("\"" + md5(data) + "\"").build();
  }

  private ResponseBytes<GetObjectResponse> get(String key) {
    byte[] b = objects.get(key);
    if (b == null) {
      throw error(404, "NoSuchKey");
    }
    return ResponseBytes.fromByteArray(GetObjectResponse.builder().build(), b);
  }

  private HeadObjectResponse head(String key) {
    if (!objects.containsKey(key)) {
      throw error(404, "NotFound");
    }
    return HeadObjectResponse.builder().contentLength((long) objects.get(key).length)
        .eTag("\"" + etags.get(key) + "\"").lastModified(Instant.now()).build();
  }

  private CompleteMultipartUploadResponse complete(CompleteMultipartUploadRequest r) {
    Map<Integer, byte[]> parts = upload(r.uploadId());
    if ("*".equals(r.ifNoneMatch()) && objects.containsKey(r.key())
        && !ignoreCompleteCondition) {
      throw error(412, "PreconditionFailed");
    }
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    StringBuilder md5s = new StringBuilder();
    List<CompletedPart> named = r.multipartUpload().parts();
    for (CompletedPart p : named) {
      byte[] data = parts.get(p.partNumber());
      if (data == null || !p.eTag().replace("\"", "").equals(md5(data))) {
        throw error(400, "InvalidPart");
      }
      out.writeBytes(data);
      md5s.append(md5(data));
    }
    uploads.remove(r.uploadId());
    String etag = io.zerorename.committer.store.MultipartEtag.of(
        splitMd5s(md5s.toString()));
    objects.put(r.key(), out.toByteArray());
    etags.put(r.key(), etag);
    return CompleteMultipartUploadResponse.builder()
        .eTag(emptyCompleteEtag ? "" : "\"" + etag + "\"").build();
  }

  private static List<String> splitMd5s(String joined) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < joined.length(); i += 32) {
      out.add(joined.substring(i, i + 32));
    }
    return out;
  }

  /** Pages of {@code max-keys} (1,000 at most), after {@code start-after} or the
   *  continuation token (here: the last key of the page before). */
  private ListObjectsV2Response list(ListObjectsV2Request r) {
    List<S3Object> contents = new ArrayList<>();
    String prefix = r.prefix() == null ? "" : r.prefix();
    String after = r.continuationToken() != null ? r.continuationToken()
        : r.startAfter() == null ? "" : r.startAfter();
    int max = r.maxKeys() == null ? 1000 : Math.min(1000, r.maxKeys());
    boolean truncated = false;
    for (Map.Entry<String, byte[]> e : objects.tailMap(after, false).entrySet()) {
      if (!e.getKey().startsWith(prefix)) {
        continue;
      }
      if (contents.size() == max) {
        truncated = true;
        break;
      }
      contents.add(S3Object.builder().key(e.getKey()).size((long) e.getValue().length)
          .eTag("\"" + etags.get(e.getKey()) + "\"").build());
    }
    return ListObjectsV2Response.builder().contents(contents).isTruncated(truncated)
        .nextContinuationToken(truncated ? contents.get(contents.size() - 1).key() : null)
        .build();
  }

  private static byte[] bytes(RequestBody body) {
    try (InputStream in = body.contentStreamProvider().newStream()) {
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static String md5(byte[] data) {
    try {
      StringBuilder out = new StringBuilder();
      for (byte b : MessageDigest.getInstance("MD5").digest(data)) {
        out.append(String.format("%02x", b));
      }
      return out.toString();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
