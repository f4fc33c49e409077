package io.zerorename.committer.stages;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import io.zerorename.committer.FencedLayout;
import io.zerorename.committer.FencedStatistics;
import io.zerorename.committer.records.CommitRecord;
import io.zerorename.committer.records.PendingCommit;
import io.zerorename.committer.records.RecordFormatException;
import io.zerorename.committer.records.RecordedUpload;
import io.zerorename.committer.records.TaskRecord;
import io.zerorename.committer.store.ObjectEntry;
import io.zerorename.committer.store.PendingUpload;

/**
 * Abort every upload this job owns that the commit record (if any) does not name, and delete
 * the job's records — never the commit record, which fences late task commits (the Python
 * reference's {@code FencedCommitter._clear}).
 *
 * <p>Owned uploads: those in any task record under the job root (any job attempt) or in a
 * {@code .pending} of the job's work area, any other upload at a key those name or the commit
 * record names, and every other upload under the destination that no other job may own (none
 * active above the destination, in it, or between it and the upload's key).
 */
final class JobClearer {
  private final StageConfig c;
  private List<PendingCommit> known = List.of();

  JobClearer(StageConfig config) {
    this.c = config;
  }

  /** Uploads the caller knows are this job's (the driver's accepted commit messages), owned
   *  as those of its stored task records are. */
  JobClearer known(List<PendingCommit> commits) {
    this.known = List.copyOf(commits);
    return this;
  }

  void clear(CommitRecord commit, boolean keepMarker) throws IOException {
    clear(commit, keepMarker, c.store().list(c.layout().rootPrefix()));
  }

  /** As {@link #clear(CommitRecord, boolean)}, given a listing of the job's root that the
   *  caller made (every object under {@link FencedLayout#rootPrefix}, nothing else). */
  void clear(CommitRecord commit, boolean keepMarker, List<ObjectEntry> listed)
      throws IOException {
    clear(commit, keepMarker, listed, () -> c.store().list(c.layout().magicRoot() + "/"),
        () -> c.store().listUploads(c.layout().destPrefix()));
  }

  /**
   * As {@link #clear(CommitRecord, boolean, List)}, given also the other two reads the clearer
   * makes, which the caller sent alongside the listing of the job's root: the listing of the
   * job's work area ({@link FencedLayout#magicRoot} with a trailing "/") and the uncompleted
   * uploads under the destination ({@link FencedLayout#destPrefix}). Same decisions, same
   * requests after those reads.
   */
  void clear(CommitRecord commit, boolean keepMarker, List<ObjectEntry> listed,
      List<ObjectEntry> work, List<PendingUpload> uploads) throws IOException {
    List<ObjectEntry> w = List.copyOf(work);
    List<PendingUpload> u = List.copyOf(uploads);
    clear(commit, keepMarker, listed, () -> w, () -> u);
  }

  /** A read of the store the clearer needs, made when it needs it or made beforehand. */
  @FunctionalInterface
  private interface Read<T> {
    T get() throws IOException;
  }

  private void clear(CommitRecord commit, boolean keepMarker, List<ObjectEntry> listed,
      Read<List<ObjectEntry>> workRead, Read<List<PendingUpload>> uploadsRead)
      throws IOException {
    FencedLayout layout = c.layout();
    Set<String> committedRecords = new HashSet<>();
    if (commit != null) {
      for (String r : commit.records()) {
        committedRecords.add(layout.key(r));
      }
    }
    List<String> unreadable = new ArrayList<>();
    List<PendingCommit> recorded = new ArrayList<>(known);
    for (ObjectEntry o : listed) {
      if (!o.key().endsWith(FencedLayout.PENDINGSET) || committedRecords.contains(o.key())) {
        continue;
      }
      try {
        recorded.addAll(TaskRecord.fromBytes(c.store().get(o.key()), layout.url(o.key()))
            .commits());
      } catch (FileNotFoundException e) {
        // deleted meanwhile
      } catch (RecordFormatException e) {
        unreadable.add(o.key());
      }
    }
    List<ObjectEntry> work = workRead.get();
    for (ObjectEntry o : work) {
      if (!o.key().endsWith(FencedLayout.MAGIC_PENDING)) {
        continue;
      }
      try {
        recorded.add(TaskOutput.fromS3A(c.store().get(o.key()), layout.url(o.key()), c, ""));
      } catch (FileNotFoundException | RecordFormatException e) {
        // unreadable work data: its upload is found by key below
      }
    }
    List<PendingUpload> uploads = uploadsRead.get();
    Set<String> committedIds = new HashSet<>();
    Set<String> committedKeys = new HashSet<>();
    if (commit != null) {
      for (RecordedUpload u : commit.uploads()) {
        committedIds.add(u.uploadId());
        committedKeys.add(layout.key(u.url()));
      }
    }
    Map<String, String> owned = new TreeMap<>();
    Set<String> keys = new HashSet<>(committedKeys);
    for (PendingCommit p : recorded) {
      String key = layout.key(p.url());
      keys.add(key);
      if (!committedIds.contains(p.uploadId())) {
        owned.put(p.uploadId(), key);
      }
    }
    List<PendingUpload> others = new ArrayList<>();
    for (PendingUpload u : uploads) {
      if (committedIds.contains(u.uploadId()) || owned.containsKey(u.uploadId())) {
        continue;
      }
      if (keys.contains(u.key())) {
        owned.put(u.uploadId(), u.key());
      } else {
        others.add(u);
      }
    }
    if (!layout.destPrefix().isEmpty() && !others.isEmpty()) {
      Set<String> own = new HashSet<>();
      own.add(layout.root());
      own.add(layout.magicRoot());
      Neighbours neighbours = new Neighbours(c.store(), own);
      int mine = 0;
      for (PendingUpload u : others) {
        if (u.key().startsWith(layout.destPrefix() + FencedLayout.PROBE_AREA)) {
          continue;
        }
        if (neighbours.mayOwn(layout.destPrefix(), u.key())) {
          owned.put(u.uploadId(), u.key());
          mine++;
        }
      }
      c.stats().incr(FencedStatistics.COMMITTER_UPLOADS_UNATTRIBUTED, others.size() - mine);
    }
    Uploads.abort(c, owned);
    Map<String, Boolean> doomed = new HashMap<>();
    for (ObjectEntry o : listed) {
      String k = o.key();
      if (!k.equals(layout.commitRecord()) && !k.equals(layout.marker())
          && !unreadable.contains(k)) {
        doomed.put(k, true);
      }
    }
    for (ObjectEntry o : work) {
      doomed.put(o.key(), true);
    }
    if (!keepMarker) {
      doomed.put(layout.marker(), true);
    }
    c.store().delete(new ArrayList<>(new java.util.TreeSet<>(doomed.keySet())));
    if (!unreadable.isEmpty()) {
      throw new RecordFormatException(layout.url(unreadable.get(0)), unreadable.size()
          + " unreadable task record(s) of job " + c.jobId() + " kept: their uploads could "
          + "not be identified");
    }
  }
}
