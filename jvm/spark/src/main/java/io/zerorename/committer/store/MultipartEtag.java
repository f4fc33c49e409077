package io.zerorename.committer.store;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;

/**
 * The ETag S3 gives an object completed from multipart parts: the MD5 of the parts' binary
 * MD5s, then {@code -<parts>}. Ceph RGW forms it the same way (and answers a complete with an
 * empty ETag, so the store derives it from the parts rather than asking with a HEAD).
 */
public final class MultipartEtag {
  private MultipartEtag() {
  }

  /** The expected ETag (bare, lower-case hex), or null when a part ETag is not an MD5. */
  public static String of(List<String> partEtags) {
    MessageDigest md5;
    try {
      md5 = MessageDigest.getInstance("MD5");
    } catch (NoSuchAlgorithmException e) {
      return null;
    }
    for (String e : partEtags) {
      String hex = e.replace("\"", "");
      if (hex.length() != 32) {
        return null;
      }
      byte[] b = new byte[16];
      for (int i = 0; i < 16; i++) {
        int hi = Character.digit(hex.charAt(2 * i), 16);
        int lo = Character.digit(hex.charAt(2 * i + 1), 16);
        if (hi < 0 || lo < 0) {
          return null;
        }
        b[i] = (byte) (hi * 16 + lo);
      }
      md5.update(b);
    }
    StringBuilder out = new StringBuilder();
    for (byte b : md5.digest()) {
      out.append(String.format("%02x", b));
    }
    return out + "-" + partEtags.size();
  }
}
