package io.zerorename.committer.records;

/**
 * A URL as the records write it: {@code scheme://bucket/key}, or {@code file:///path} (the
 * Python reference's {@code parse_url}). Keys are kept exactly, never normalised.
 */
public final class StoreUrl {
  private final String scheme;
  private final String bucket;
  private final String key;

  private StoreUrl(String scheme, String bucket, String key) {
    this.scheme = scheme;
    this.bucket = bucket;
    this.key = key;
  }

  public static StoreUrl of(String scheme, String bucket, String key) {
    return new StoreUrl(scheme.toLowerCase(java.util.Locale.ROOT), bucket, key);
  }

  /** Parse; {@link IllegalArgumentException} for anything that is not scheme://bucket/key. */
  public static StoreUrl parse(String url) {
    int sep = url.indexOf("://");
    if (sep <= 0) {
      throw new IllegalArgumentException("not a URL: " + url
          + " (expected scheme://bucket/key or file:///path)");
    }
    String scheme = url.substring(0, sep).toLowerCase(java.util.Locale.ROOT);
    String rest = url.substring(sep + 3);
    if (scheme.equals("file")) {
      if (!rest.startsWith("/")) {
        throw new IllegalArgumentException("file URLs must be absolute: " + url);
      }
      int i = 0;
      while (i < rest.length() && rest.charAt(i) == '/') {
        i++;
      }
      return new StoreUrl(scheme, "", rest.substring(i));
    }
    int slash = rest.indexOf('/');
    String bucket = slash < 0 ? rest : rest.substring(0, slash);
    if (bucket.isEmpty()) {
      throw new IllegalArgumentException("missing bucket name: " + url);
    }
    return new StoreUrl(scheme, bucket, slash < 0 ? "" : rest.substring(slash + 1));
  }

  public String scheme() {
    return scheme;
  }

  public String bucket() {
    return bucket;
  }

  public String key() {
    return key;
  }

  /** The same store (s3a, s3n and s3 are one kind) and bucket. */
  public boolean sameStore(StoreUrl other) {
    return canonical(scheme).equals(canonical(other.scheme)) && bucket.equals(other.bucket);
  }

  private static String canonical(String s) {
    return s.equals("s3a") || s.equals("s3n") ? "s3" : s;
  }

  /** The URL of another key in this store. */
  public String withKey(String otherKey) {
    return scheme.equals("file") ? "file:///" + otherKey
        : scheme + "://" + bucket + "/" + otherKey;
  }

  @Override
  public String toString() {
    return withKey(key);
  }

  /** The key as a directory prefix ("" at the bucket root, else ending in "/"). */
  public String dirPrefix() {
    String k = key;
    while (k.endsWith("/")) {
      k = k.substring(0, k.length() - 1);
    }
    return k.isEmpty() ? "" : k + "/";
  }

  /** Percent-encoded as Hadoop's {@code Path.toUri()} prints it (Python's encode_url). */
  public String encoded() {
    String quoted = Fields.quote(key);
    return scheme.equals("file") ? "file:///" + quoted : scheme + "://" + bucket + "/" + quoted;
  }

  public static String decode(String uri) {
    return Fields.unquote(uri);
  }
}
