package io.zerorename.committer.s3a;

import java.util.ArrayList;
import java.util.List;

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
  public List<Upload> uploads(String attemptId) {
    List<SinglePendingCommit> held =
        InMemoryMagicCommitTracker.getTaskAttemptIdToMpuMetadata().get(attemptId);
    List<Upload> out = new ArrayList<>();
    if (held == null) {
      return out;
    }
    synchronized (held) { // S3A's list is a synchronizedList
      for (SinglePendingCommit c : held) {
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
  public int forget(String attemptId) {
    InMemoryMagicCommitTracker.getTaskAttemptIdToMpuMetadata().remove(attemptId);
    List<Path> paths = InMemoryMagicCommitTracker.getTaskAttemptIdToPath().remove(attemptId);
    if (paths == null) {
      return 0;
    }
    synchronized (paths) {
      for (Path p : paths) {
        InMemoryMagicCommitTracker.getPathToBytesWritten().remove(p);
      }
      return paths.size();
    }
  }
}
