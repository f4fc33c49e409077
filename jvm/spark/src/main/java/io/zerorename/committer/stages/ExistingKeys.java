package io.zerorename.committer.stages;

import java.io.IOException;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Set;
import java.util.TreeSet;

import io.zerorename.committer.FencedStatistics;
import io.zerorename.committer.store.KeyListing;
import io.zerorename.committer.store.ObjectEntry;

/**
 * Which of a job's keys already exist, found by listing them once: the job commit's check
 * before the commit point ({@link CheckKeysStage}, on every store), whose answer the completes
 * reuse on a store whose multipart complete ignores {@code If-None-Match: *} (Ceph RGW), where
 * the store would otherwise send a HEAD before each complete; and a roll-forward's completes on
 * such a store.
 *
 * <p>One ListObjectsV2 without a delimiter under the longest common prefix of the keys,
 * starting just before the first key, one page (1,000 keys) at a time, ending at the first
 * page that passes the greatest key. The page budget: another page is listed only while the
 * pages listed so far are fewer than the job's keys they covered. Each page listed then saves
 * at least one HEAD, so the listing plus the HEADs left for the keys it did not reach never
 * cost more requests than a HEAD per key (the first page always covers the first key); over
 * a destination whose other objects sort among the job's keys by the thousand, the listing
 * stops early and the rest is checked with a HEAD each, as before.
 *
 * <p>Like the HEADs, a listing is a look before the write, not a condition of it: an object
 * another writer creates between the listing and the complete is overwritten on such a store.
 */
public final class ExistingKeys {
  private final NavigableSet<String> keys;
  /** The listing is complete through this key (null: nothing listed). */
  private final String through;
  private final Map<String, ObjectEntry> found;
  /** Keys the listing did not reach, answered by a HEAD each ({@link #withHeads}). */
  private final Set<String> headed;

  private ExistingKeys(NavigableSet<String> keys, String through,
      Map<String, ObjectEntry> found, Set<String> headed) {
    this.keys = keys;
    this.through = through;
    this.found = found;
    this.headed = headed;
  }

  /** Whether the listing (or a HEAD) answered for {@code key}: else the store checks with a
   *  HEAD. */
  boolean covers(String key) {
    return headed.contains(key) || through != null && keys.contains(key)
        && KeyListing.compareKeys(key, through) <= 0;
  }

  /** This listing with the answers of HEADs sent for {@code heads} ({@code entries[i]}: null
   *  where absent), which it then covers too. */
  ExistingKeys withHeads(List<String> heads, List<ObjectEntry> entries) {
    if (heads.isEmpty()) {
      return this;
    }
    Map<String, ObjectEntry> all = new HashMap<>(found);
    Set<String> answered = new HashSet<>(headed);
    for (int i = 0; i < heads.size(); i++) {
      answered.add(heads.get(i));
      if (entries.get(i) != null) {
        all.put(heads.get(i), entries.get(i));
      }
    }
    return new ExistingKeys(keys, through, all, answered);
  }

  /** The object at {@code key} as listed, or null when the listing found none. */
  ObjectEntry existing(String key) {
    return found.get(key);
  }

  /** The store checks each key itself (it honours the condition): nothing to list. */
  static ExistingKeys none() {
    return new ExistingKeys(new TreeSet<>(), null, Map.of(), Set.of());
  }

  /** List {@code keys} (all of one bucket), counting the pages and keys in the statistics. */
  static ExistingKeys list(StageConfig c, Collection<String> all) throws IOException {
    NavigableSet<String> keys = new TreeSet<>(KeyListing::compareKeys);
    keys.addAll(all);
    if (keys.isEmpty()) {
      return none();
    }
    String first = keys.first();
    String last = keys.last();
    String prefix = commonPrefix(first, last);
    String after = first.substring(0, first.offsetByCodePoints(first.length(), -1));
    Map<String, ObjectEntry> found = new HashMap<>();
    int pages = 0;
    int reached = 0;
    KeyListing page;
    while (true) {
      page = c.store().listFrom(prefix, after, last, 1);
      pages += page.pages();
      for (ObjectEntry e : page.entries()) {
        if (keys.contains(e.key())) {
          found.put(e.key(), e);
        }
      }
      if (page.complete()) {
        reached = keys.size();
        break;
      }
      if (!page.coveredThrough().isEmpty()) {
        reached = keys.headSet(page.coveredThrough(), true).size();
        after = page.coveredThrough();
      }
      if (pages >= reached) {
        break;  // the budget: each page listed has saved a HEAD at least
      }
    }
    String through = page.complete() ? last : after;
    c.stats().incr(FencedStatistics.COMMITTER_COMPLETE_LIST_PAGES, pages);
    c.stats().incr(FencedStatistics.COMMITTER_COMPLETE_KEYS_LISTED, reached);
    c.stats().incr(FencedStatistics.COMMITTER_COMPLETE_KEYS_HEADED, keys.size() - reached);
    AbstractStage.LOG.info("job {}: {} LIST page(s) under {} answered for {} of its {} "
        + "key(s) ({} exist already){}", c.jobId(),
        pages, c.layout().url(prefix), reached, keys.size(), found.size(),
        reached < keys.size() ? "; the other " + (keys.size() - reached) + " are checked "
        + "with a HEAD each" : "");
    return new ExistingKeys(keys, through, found, Set.of());
  }

  /** The longest common prefix, not splitting a character. */
  static String commonPrefix(String a, String b) {
    int n = 0;
    int max = Math.min(a.length(), b.length());
    while (n < max && a.charAt(n) == b.charAt(n)) {
      n++;
    }
    if (n > 0 && Character.isHighSurrogate(a.charAt(n - 1))) {
      n--;
    }
    return a.substring(0, n);
  }
}
