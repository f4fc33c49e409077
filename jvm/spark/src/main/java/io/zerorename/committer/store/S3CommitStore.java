package io.zerorename.committer.store;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.hadoop.conf.Configuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;
import software.amazon.awssdk.services.s3.S3Configuration;
import software.amazon.awssdk.services.s3.model.AbortMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.CommonPrefix;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadResponse;
import software.amazon.awssdk.services.s3.model.CompletedMultipartUpload;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.Delete;
import software.amazon.awssdk.services.s3.model.DeleteObjectsRequest;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.HeadObjectRequest;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListMultipartUploadsRequest;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.MultipartUpload;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;
import software.amazon.awssdk.services.s3.model.UploadPartRequest;

/**
 * The store over S3 with an AWS SDK v2 client of the committer's own, configured from the
 * same S3A options as the destination's file system ({@code fs.s3a.endpoint},
 * {@code endpoint.region}, {@code path.style.access}, {@code connection.ssl.enabled}, the
 * access and secret key; per-bucket {@code fs.s3a.bucket.<bucket>.*} values first). Checksums
 * are sent and checked only where S3 requires them, as S3A 3.5.0 does, so third-party stores
 * accept the requests.
 *
 * <p>{@code If-None-Match: *} goes on PutObject and CompleteMultipartUpload when asked; a 412
 * is {@link PreconditionFailedException}; a 409 {@code ConditionalRequestConflict} (a
 * concurrent conditional write in flight) is retried.
 *
 * <p>Servers differ where the Python {@code S3Store} found they do (docs/user/stores.md,
 * the quirks table), and this store answers each the same way: an endpoint measured to ignore
 * {@code If-None-Match} on CompleteMultipartUpload (Ceph RGW 16.2 overwrites; {@link
 * #conditionalComplete}) gets a HEAD before each conditional complete, a 412 when the key
 * exists (not atomic against a concurrent writer; the job commit avoids those HEADs by listing
 * its keys once, {@link #listFrom}, and completing the absent ones without the condition); an
 * empty ETag in a complete's answer (RGW)
 * is derived from the parts' ETags ({@link MultipartEtag}), or read with a HEAD where the parts'
 * ETags are not MD5s. The client reaches an {@code https://} endpoint with the JVM's trust
 * store, as S3A does ({@code -Djavax.net.ssl.trustStore}).
 */
public final class S3CommitStore implements CommitStore {
  private static final Logger LOG = LoggerFactory.getLogger(S3CommitStore.class);
  private static final int CONFLICT_RETRIES = 5;
  /** Per store name: does complete honour If-None-Match (measured once per JVM)? */
  private static final Map<String, Boolean> CONDITIONAL_COMPLETE = new ConcurrentHashMap<>();

  private final S3Client s3;
  private final String bucket;
  private final String scheme;
  private final String name;

  public S3CommitStore(S3Client s3, String scheme, String bucket, String name) {
    this.s3 = s3;
    this.scheme = scheme;
    this.bucket = bucket;
    this.name = name;
  }

  /** A client for {@code bucket} from the S3A options in {@code conf}. */
  public static S3CommitStore create(Configuration conf, String scheme, String bucket) {
    String endpoint = option(conf, bucket, "endpoint", "");
    boolean ssl = Boolean.parseBoolean(option(conf, bucket, "connection.ssl.enabled", "true"));
    String region = option(conf, bucket, "endpoint.region", "");
    if (region.isEmpty()) {
      region = option(conf, bucket, "region", "");
    }
    boolean pathStyle = Boolean.parseBoolean(option(conf, bucket, "path.style.access",
        "false"));
    S3ClientBuilder builder = S3Client.builder()
        .httpClientBuilder(ApacheHttpClient.builder())
        .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
        .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
        .serviceConfiguration(S3Configuration.builder().pathStyleAccessEnabled(pathStyle)
            .build())
        .credentialsProvider(credentials(conf, bucket));
    String shown = "s3.amazonaws.com";
    if (!endpoint.isEmpty()) {
      String uri = endpoint.contains("://") ? endpoint : (ssl ? "https://" : "http://")
          + endpoint;
      builder.endpointOverride(URI.create(uri));
      shown = uri;
    }
    builder.region(Region.of(region.isEmpty() ? "us-east-1" : region));
    return new S3CommitStore(builder.build(), scheme, bucket, "s3 " + shown + " bucket "
        + bucket);
  }

  /** {@code fs.s3a.bucket.<bucket>.<suffix>}, else {@code fs.s3a.<suffix>}, else dflt. */
  static String option(Configuration conf, String bucket, String suffix, String dflt) {
    String v = conf.getTrimmed("fs.s3a.bucket." + bucket + "." + suffix);
    if (v == null || v.isEmpty()) {
      v = conf.getTrimmed("fs.s3a." + suffix);
    }
    return v == null ? dflt : v;
  }

  private static String secret(Configuration conf, String bucket, String suffix) {
    for (String key : new String[] {"fs.s3a.bucket." + bucket + "." + suffix,
        "fs.s3a." + suffix}) {
      try {
        char[] v = conf.getPassword(key);
        if (v != null && v.length > 0) {
          return new String(v).trim();
        }
      } catch (IOException e) {
        LOG.debug("no {} from the credential providers: {}", key, e.toString());
      }
    }
    return "";
  }

  private static AwsCredentialsProvider credentials(Configuration conf, String bucket) {
    String access = secret(conf, bucket, "access.key");
    String secretKey = secret(conf, bucket, "secret.key");
    String token = secret(conf, bucket, "session.token");
    if (!access.isEmpty() && !secretKey.isEmpty()) {
      return StaticCredentialsProvider.create(token.isEmpty()
          ? AwsBasicCredentials.create(access, secretKey)
          : AwsSessionCredentials.create(access, secretKey, token));
    }
    return DefaultCredentialsProvider.builder().build();
  }

  /** Forget what was measured of every endpoint (tests that reuse a name for a server). */
  public static void clearCache() {
    CONDITIONAL_COMPLETE.clear();
  }

  /** What {@link #conditionalComplete} measured of the store named {@code name}, or null. */
  public static Boolean measuredConditionalComplete(String name) {
    return CONDITIONAL_COMPLETE.get(name);
  }

  @Override
  public String name() {
    return name;
  }

  private String url(String key) {
    return scheme + "://" + bucket + "/" + key;
  }

  private IOException translate(String op, String key, SdkException e) {
    if (e instanceof S3Exception) {
      S3Exception s = (S3Exception) e;
      String code = s.awsErrorDetails() != null ? s.awsErrorDetails().errorCode() : "";
      if (s.statusCode() == 412) {
        return new PreconditionFailedException(url(key), op + ": the key exists (412 "
            + code + ")");
      }
      if (s.statusCode() == 404) {
        FileNotFoundException nf = new FileNotFoundException(url(key) + ": " + op + ": "
            + code + " (404)");
        nf.initCause(e);
        return nf;
      }
      return new StoreRequestException(url(key), op + " failed: " + s.statusCode() + " "
          + code + ": " + s.getMessage(), s.statusCode(), code, e);
    }
    return new StoreRequestException(url(key), op + " failed: " + e, 0, "", e);
  }

  private static boolean conflict(SdkException e) {
    return e instanceof S3Exception && ((S3Exception) e).statusCode() == 409
        && ((S3Exception) e).awsErrorDetails() != null
        && "ConditionalRequestConflict".equals(
            ((S3Exception) e).awsErrorDetails().errorCode());
  }

  private static void pause(int attempt) throws InterruptedIOException {
    try {
      Thread.sleep(50L << attempt);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while retrying a conditional request");
    }
  }

  @Override
  public void put(String key, byte[] data, boolean ifNoneMatch) throws IOException {
    PutObjectRequest.Builder req = PutObjectRequest.builder().bucket(bucket).key(key)
        .contentLength((long) data.length);
    if (ifNoneMatch) {
      req.ifNoneMatch("*");
    }
    PutObjectRequest request = req.build();
    for (int attempt = 0; ; attempt++) {
      try {
        s3.putObject(request, RequestBody.fromBytes(data));
        return;
      } catch (SdkException e) {
        if (conflict(e) && attempt < CONFLICT_RETRIES) {
          pause(attempt);
          continue;
        }
        throw translate("PUT" + (ifNoneMatch ? " If-None-Match: *" : ""), key, e);
      }
    }
  }

  @Override
  public byte[] get(String key) throws IOException {
    try {
      return s3.getObjectAsBytes(GetObjectRequest.builder().bucket(bucket).key(key).build())
          .asByteArray();
    } catch (SdkException e) {
      throw translate("GET", key, e);
    }
  }

  @Override
  public ObjectEntry head(String key) throws IOException {
    try {
      HeadObjectResponse r = s3.headObject(HeadObjectRequest.builder().bucket(bucket).key(key)
          .build());
      return new ObjectEntry(key, r.contentLength() == null ? 0 : r.contentLength(),
          strip(r.eTag()), r.lastModified() == null ? 0 : r.lastModified().toEpochMilli());
    } catch (SdkException e) {
      IOException t = translate("HEAD", key, e);
      if (t instanceof FileNotFoundException) {
        return null;
      }
      throw t;
    }
  }

  private static String strip(String etag) {
    return etag == null ? "" : etag.replace("\"", "");
  }

  @Override
  public void delete(Collection<String> keys) throws IOException {
    List<String> all = new ArrayList<>(keys);
    for (int start = 0; start < all.size(); start += 1000) {
      List<ObjectIdentifier> ids = new ArrayList<>();
      for (String k : all.subList(start, Math.min(all.size(), start + 1000))) {
        ids.add(ObjectIdentifier.builder().key(k).build());
      }
      try {
        var r = s3.deleteObjects(DeleteObjectsRequest.builder().bucket(bucket)
            .delete(Delete.builder().objects(ids).quiet(true).build()).build());
        if (r.hasErrors() && !r.errors().isEmpty()) {
          var first = r.errors().get(0);
          throw new StoreRequestException(url(first.key()), "DELETE failed for "
              + r.errors().size() + " key(s): " + first.code() + ": " + first.message(), 0,
              first.code(), null);
        }
      } catch (SdkException e) {
        throw translate("DELETE (bulk)", ids.get(0).key(), e);
      }
    }
  }

  @Override
  public List<ObjectEntry> list(String prefix) throws IOException {
    List<ObjectEntry> out = new ArrayList<>();
    try {
      for (ListObjectsV2Response page : s3.listObjectsV2Paginator(ListObjectsV2Request
          .builder().bucket(bucket).prefix(prefix).build())) {
        for (S3Object o : page.contents()) {
          out.add(new ObjectEntry(o.key(), o.size() == null ? 0 : o.size(), strip(o.eTag()),
              o.lastModified() == null ? 0 : o.lastModified().toEpochMilli()));
        }
      }
    } catch (SdkException e) {
      throw translate("LIST", prefix, e);
    }
    return out;
  }

  /** Keys per ListObjectsV2 page (S3's and RGW's most). */
  public static final int PAGE_KEYS = 1000;

  @Override
  public KeyListing listFrom(String prefix, String startAfter, String lastKey, int maxPages)
      throws IOException {
    List<ObjectEntry> out = new ArrayList<>();
    ListObjectsV2Request.Builder req = ListObjectsV2Request.builder().bucket(bucket)
        .prefix(prefix).maxKeys(PAGE_KEYS);
    if (!startAfter.isEmpty()) {
      req.startAfter(startAfter);
    }
    String covered = "";
    int pages = 0;
    try {
      while (pages < maxPages) {
        ListObjectsV2Response page = s3.listObjectsV2(req.build());
        pages++;
        for (S3Object o : page.contents()) {
          if (KeyListing.compareKeys(o.key(), lastKey) > 0) {
            return new KeyListing(out, lastKey, true, pages);
          }
          out.add(new ObjectEntry(o.key(), o.size() == null ? 0 : o.size(), strip(o.eTag()),
              o.lastModified() == null ? 0 : o.lastModified().toEpochMilli()));
          covered = o.key();
        }
        if (!Boolean.TRUE.equals(page.isTruncated()) || page.nextContinuationToken() == null) {
          return new KeyListing(out, lastKey, true, pages);
        }
        req.continuationToken(page.nextContinuationToken());
      }
    } catch (SdkException e) {
      throw translate("LIST", prefix, e);
    }
    return new KeyListing(out, covered, false, pages);
  }

  /** S3's completed uploads always carry the multipart ETag ({@code -N}). */
  @Override
  public boolean multipartEtags() {
    return true;
  }

  @Override
  public boolean completeIgnoresCondition() {
    return Boolean.FALSE.equals(CONDITIONAL_COMPLETE.get(name));
  }

  @Override
  public List<String> listPrefixes(String prefix) throws IOException {
    List<String> out = new ArrayList<>();
    try {
      for (ListObjectsV2Response page : s3.listObjectsV2Paginator(ListObjectsV2Request
          .builder().bucket(bucket).prefix(prefix).delimiter("/").build())) {
        for (CommonPrefix p : page.commonPrefixes()) {
          out.add(p.prefix());
        }
      }
    } catch (SdkException e) {
      throw translate("LIST", prefix, e);
    }
    return out;
  }

  @Override
  public List<PendingUpload> listUploads(String prefix) throws IOException {
    List<PendingUpload> out = new ArrayList<>();
    try {
      for (var page : s3.listMultipartUploadsPaginator(ListMultipartUploadsRequest.builder()
          .bucket(bucket).prefix(prefix).build())) {
        for (MultipartUpload u : page.uploads()) {
          out.add(new PendingUpload(u.key(), u.uploadId()));
        }
      }
    } catch (SdkException e) {
      throw translate("LIST uploads", prefix, e);
    }
    return out;
  }

  @Override
  public String complete(String key, String uploadId, List<String> etags, boolean ifNoneMatch)
      throws IOException {
    String op = "COMPLETE upload " + uploadId + (ifNoneMatch ? " If-None-Match: *" : "");
    boolean serverChecks = Boolean.TRUE.equals(CONDITIONAL_COMPLETE.get(name));
    if (ifNoneMatch && !serverChecks && head(key) != null) {
      throw new PreconditionFailedException(url(key), op + ": the key exists (checked with "
          + "HEAD: " + (CONDITIONAL_COMPLETE.containsKey(name) ? "this endpoint ignores "
          + "If-None-Match on complete-multipart" : "not measured whether this endpoint "
          + "honours If-None-Match on complete-multipart") + ")");
    }
    List<CompletedPart> parts = new ArrayList<>();
    for (int i = 0; i < etags.size(); i++) {
      parts.add(CompletedPart.builder().partNumber(i + 1).eTag(etags.get(i)).build());
    }
    CompleteMultipartUploadRequest.Builder req = CompleteMultipartUploadRequest.builder()
        .bucket(bucket).key(key).uploadId(uploadId)
        .multipartUpload(CompletedMultipartUpload.builder().parts(parts).build());
    if (ifNoneMatch) {
      req.ifNoneMatch("*");
    }
    CompleteMultipartUploadRequest request = req.build();
    String etag;
    for (int attempt = 0; ; attempt++) {
      try {
        CompleteMultipartUploadResponse r = s3.completeMultipartUpload(request);
        etag = strip(r.eTag());
        break;
      } catch (SdkException e) {
        if (conflict(e) && attempt < CONFLICT_RETRIES) {
          pause(attempt);
          continue;
        }
        throw translate(op, key, e);
      }
    }
    if (etag.isEmpty()) {  // Ceph RGW: derived as S3 forms it; else asked
      etag = MultipartEtag.of(etags);
      if (etag == null) {
        ObjectEntry info = head(key);
        etag = info == null ? "" : info.etag();
      }
    }
    return etag;
  }

  /**
   * Measure once per store (name) whether CompleteMultipartUpload refuses an existing key
   * when sent {@code If-None-Match: *}: PUT {@code <area>complete}, then complete an upload of
   * the same key with the condition. A 412 means it honours it; success (the key overwritten)
   * or any other error, that it does not, and {@link #complete} checks with HEAD. Leaves no
   * upload; the object is deleted.
   */
  @Override
  public boolean conditionalComplete(String area) throws IOException {
    Boolean known = CONDITIONAL_COMPLETE.get(name);
    if (known != null) {
      return known;
    }
    String key = area + "complete";
    byte[] body = "zerorename conditional complete probe\n".getBytes(StandardCharsets.UTF_8);
    put(key, body, false);
    String uploadId = null;
    boolean honoured;
    String why;
    try {
      uploadId = s3.createMultipartUpload(CreateMultipartUploadRequest.builder().bucket(bucket)
          .key(key).build()).uploadId();
      String part = s3.uploadPart(UploadPartRequest.builder().bucket(bucket).key(key)
          .uploadId(uploadId).partNumber(1).contentLength((long) body.length).build(),
          RequestBody.fromBytes(body)).eTag();
      try {
        s3.completeMultipartUpload(CompleteMultipartUploadRequest.builder().bucket(bucket)
            .key(key).uploadId(uploadId).ifNoneMatch("*")
            .multipartUpload(CompletedMultipartUpload.builder().parts(CompletedPart.builder()
                .partNumber(1).eTag(part).build()).build()).build());
        uploadId = null;
        honoured = false;
        why = "it completed an upload over an existing key: overwrote it";
      } catch (S3Exception e) {
        honoured = e.statusCode() == 412;
        why = honoured ? "412 over an existing key" : "it answered " + e.statusCode() + " "
            + (e.awsErrorDetails() != null ? e.awsErrorDetails().errorCode() : "");
      }
    } catch (SdkException e) {
      throw translate("store check (complete If-None-Match: *)", key, e);
    } finally {
      try {
        if (uploadId != null) {
          abort(key, uploadId);
        }
        delete(List.of(key));
      } catch (IOException e) {
        LOG.warn("zerorename: could not remove the store check's {}: {}", url(key),
            e.toString());
      }
    }
    LOG.info("zerorename: store check: {} {} If-None-Match on complete-multipart ({}){}",
        name, honoured ? "honours" : "ignores", why,
        honoured ? "" : ": a job commit lists its keys once, and checks with a HEAD each key "
        + "the listing did not cover");
    CONDITIONAL_COMPLETE.put(name, honoured);
    return honoured;
  }

  @Override
  public boolean abort(String key, String uploadId) throws IOException {
    try {
      s3.abortMultipartUpload(AbortMultipartUploadRequest.builder().bucket(bucket).key(key)
          .uploadId(uploadId).build());
      return true;
    } catch (SdkException e) {
      IOException t = translate("ABORT upload " + uploadId, key, e);
      if (t instanceof FileNotFoundException) {
        return false;
      }
      throw t;
    }
  }

  @Override
  public void close() {
    s3.close();
  }
}
