package io.zerorename.committer.store;

import java.util.List;

/**
 * What a bounded listing of a key range found ({@link CommitStore#listFrom}): the objects it
 * listed, in key order, and the key through which it is complete — every object whose key lies
 * after the listing's start and at most {@code coveredThrough} is among {@code entries}. It is
 * the range's last key when the listing reached it (or the end of the prefix); the last key
 * listed when the page budget ran out first; empty when nothing was covered.
 *
 * @param entries the objects listed, in key order, none beyond the range's last key
 * @param coveredThrough the greatest key up to which the listing is complete, or ""
 * @param complete whether the listing covers the whole range
 * @param pages the LIST requests it took
 */
public record KeyListing(List<ObjectEntry> entries, String coveredThrough, boolean complete,
    int pages) {

  public KeyListing {
    entries = List.copyOf(entries);
  }

  /** Did the listing cover {@code key} (a key of the range listed)? */
  public boolean covers(String key) {
    return !coveredThrough.isEmpty() && compareKeys(key, coveredThrough) <= 0;
  }

  /**
   * Keys in the order S3 lists them: by their UTF-8 bytes, which is the order of their code
   * points (Java's {@link String#compareTo} orders UTF-16 units, which differs beyond the
   * basic plane).
   */
  public static int compareKeys(String a, String b) {
    int i = 0;
    int j = 0;
    while (i < a.length() && j < b.length()) {
      int ca = a.codePointAt(i);
      int cb = b.codePointAt(j);
      if (ca != cb) {
        return Integer.compare(ca, cb);
      }
      i += Character.charCount(ca);
      j += Character.charCount(cb);
    }
    return Integer.compare(a.length() - i, b.length() - j);
  }
}
