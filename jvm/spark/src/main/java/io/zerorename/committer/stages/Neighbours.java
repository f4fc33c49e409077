package io.zerorename.committer.stages;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.zerorename.committer.FencedLayout;
import io.zerorename.committer.store.CommitStore;
import io.zerorename.committer.store.ObjectEntry;

/**
 * Is another job active where this one is about to abort uploads no record names? (The Python
 * reference's {@code Neighbours}.) Every committer keeps a job root in the directory it writes
 * to ({@code __magic_job-}, {@code __staging_job-}, {@code __fenced_job-}, {@code _temporary}),
 * so for the directory of each key in question and every directory above it, one short
 * listing of the roots there answers. A fenced root holding only its commit record is a
 * finished job. This job's own roots are not neighbours.
 */
final class Neighbours {
  private final CommitStore store;
  private final Set<String> ownRoots;
  private final Map<String, Boolean> cache = new HashMap<>();

  Neighbours(CommitStore store, Set<String> ownRoots) {
    this.store = store;
    this.ownRoots = ownRoots;
  }

  /** Directory prefixes strictly above {@code key}, nearest first, down to "" (the bucket). */
  static List<String> ancestors(String key) {
    List<String> out = new ArrayList<>();
    String k = key;
    while (k.endsWith("/")) {
      k = k.substring(0, k.length() - 1);
    }
    int slash = k.lastIndexOf('/');
    while (slash >= 0) {
      k = k.substring(0, slash);
      out.add(k + "/");
      slash = k.lastIndexOf('/');
    }
    out.add("");
    return out;
  }

  boolean mayOwn(String destPrefix, String key) throws IOException {
    for (String dir : ancestors(destPrefix)) {
      if (activeAt(dir)) {
        return false;
      }
    }
    for (String dir : ancestors(key)) {
      if (dir.length() < destPrefix.length() || !dir.startsWith(destPrefix)) {
        break;
      }
      if (activeAt(dir)) {
        return false;
      }
    }
    return true;
  }

  private boolean activeAt(String dir) throws IOException {
    Boolean cached = cache.get(dir);
    if (cached == null) {
      cached = look(dir);
      cache.put(dir, cached);
    }
    return cached;
  }

  private boolean look(String dir) throws IOException {
    for (String prefix : store.listPrefixes(dir + "__")) {
      String root = prefix.substring(0, prefix.length() - 1);
      if (ownRoots.contains(root)) {
        continue;
      }
      String name = root.substring(root.lastIndexOf('/') + 1);
      if (!name.startsWith(FencedLayout.FENCED_PREFIX) || fencedRootActive(prefix)) {
        return true;
      }
    }
    for (String prefix : store.listPrefixes(dir + "_temporary/")) {
      if (!ownRoots.contains(prefix.substring(0, prefix.length() - 1))) {
        return true;
      }
    }
    return false;
  }

  private boolean fencedRootActive(String prefix) throws IOException {
    for (ObjectEntry o : store.list(prefix)) {
      if (!o.key().endsWith("/" + FencedLayout.COMMIT_RECORD)) {
        return true;
      }
    }
    return false;
  }
}
