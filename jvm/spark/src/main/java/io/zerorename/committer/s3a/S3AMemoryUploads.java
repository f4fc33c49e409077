package io.zerorename.committer.s3a;

import java.net.URI;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.s3a.commit.files.SinglePendingCommit;
import org.apache.hadoop.fs.s3a.commit.files.UploadEtag;
import org.apache.hadoop.fs.s3a.commit.magic.InMemoryMagicCommitTracker;

import io.zerorename.committer.stages.TrackedUploads;

/**
 * S3A's in-memory magic tracker ({@code fs.s3a.committer.magic.track.commits.in.memory.enabled},
 * hadoop-aws 3.5.0): a file closed under a magic path leaves its upload in three static maps
 * of {@link InMemoryMagicCommitTracker}, keyed by the task attempt ID S3A reads from the path,
 * instead of a 0-byte marker and a {@code .pending} object in the store.
 *
 * <p>The only class of this jar that names S3A's classes: the committer makes one only for
 * a destination whose filesystem is S3A with the option on, so jobs on {@code file://} run
 * without hadoop-aws.
 */
public final class S3AMemoryUploads implements TrackedUploads {
  @Override
  public List<Upload> uploads(String attemptId, String bucket, String workDir) {
    List<SinglePendingCommit> held =
        InMemoryMagicCommitTracker.getTaskAttemptIdToMpuMetadata().get(attemptId);
    List<Upload> out = new ArrayList<>();
    if (held == null) {
      return out;
    }
    synchronized (held) { // S3A's lists are synchronized lists
      for (SinglePendingCommit c : held) {
        if (!under(new Path(c.getUri()), bucket, workDir)) {
          continue;
        }
        List<String> etags = new ArrayList<>();
        for (UploadEtag e : c.getEtags()) {
          etags.add(e.getEtag());
        }
        out.add(new Upload(c.getDestinationKey(), c.getUploadId(), etags, c.getLength(),
            c.getCreated()));
      }
    }
    return out;
  }

  @Override
  public int forget(String attemptId, String bucket, String workDir) {
    Map<String, List<SinglePendingCommit>> commits =
        InMemoryMagicCommitTracker.getTaskAttemptIdToMpuMetadata();
    Map<String, List<Path>> paths = InMemoryMagicCommitTracker.getTaskAttemptIdToPath();
    List<SinglePendingCommit> held = commits.get(attemptId);
    if (held != null) {
      synchronized (held) {
        held.removeIf(c -> under(new Path(c.getUri()), bucket, workDir));
      }
      commits.remove(attemptId, Collections.<SinglePendingCommit>emptyList());
    }
    int forgotten = 0;
    List<Path> written = paths.get(attemptId);
    if (written != null) {
      synchronized (written) {
        for (Iterator<Path> it = written.iterator(); it.hasNext();) {
          Path p = it.next();
          if (under(p, bucket, workDir)) {
            InMemoryMagicCommitTracker.getPathToBytesWritten().remove(p);
            it.remove();
            forgotten++;
          }
        }
      }
      paths.remove(attemptId, Collections.<Path>emptyList());
    }
    return forgotten;
  }

  /** Is {@code p} a file of bucket {@code bucket} under the key prefix {@code workDir}? */
  static boolean under(Path p, String bucket, String workDir) {
    URI u = p.toUri();
    String path = u.getPath() == null ? "" : u.getPath();
    return bucket.equals(u.getAuthority()) && path.startsWith("/" + workDir + "/");
  }
}
