package zerorename.conformance;

import java.io.IOException;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;

import io.zerorename.committer.FencedCommitter;
import io.zerorename.committer.FencedOptions;
import io.zerorename.committer.StoreFencing;
import io.zerorename.committer.records.StoreUrl;
import io.zerorename.committer.store.CommitStore;
import io.zerorename.committer.store.ForwardingCommitStore;
import io.zerorename.committer.store.KeyListing;
import io.zerorename.committer.store.ObjectEntry;
import io.zerorename.committer.store.PendingUpload;
import io.zerorename.committer.store.S3CommitStore;

/**
 * zerorename's {@code fenced} committer ({@link FencedCommitter} and its subclasses) under
 * {@link S3ACommitDriver}: its task output goes through S3A (magic paths, paused by
 * {@link PauseInterceptor} like S3A's own committers), but its records, uploads and listings go
 * through an S3 client of its own, which S3A's interceptors never see. Each actor's committer
 * is therefore given that store ({@link FencedCommitter#withStore}) behind a {@link Paused}
 * facade that stops the actor before every request, announced as the SDK names it
 * ({@code PutObject KEY}, {@code CompleteMultipartUpload KEY}...), so each of the committer's
 * own requests is a step of the model's scheduler too, and a crash or kill there throws what
 * an interrupted request throws.
 *
 * <p>The job setup's store check ({@link StoreFencing}: sixteen racing conditional PUTs, from
 * threads of their own) is measured once per store and JVM on the unpaused store, before any
 * actor runs; every later decision for that store is the cached one, as in a Spark executor.
 * The marker probe of job setup (one conditional PUT that must be refused) stays a pair of
 * steps of the run.
 *
 * <p>Loaded only when the committer class is a fenced committer (the production jar is on the
 * class path then; {@link CommitDriver#isFenced} tests by name, so no other committer loads
 * it).
 */
final class FencedDriving {
  /** One unpaused store per bucket and endpoint (per JVM, as the committer keeps them). */
  private static final Map<String, CommitStore> STORES = new ConcurrentHashMap<>();

  private FencedDriving() {
  }

  /** What {@code commit_task} answers: the attempt whose record commits the task (this
   *  committer's own, or the one whose record was there first). */
  static String committedBy(PathOutputCommitter committer) {
    String who = ((FencedCommitter) committer).taskCommittedBy();
    return who == null ? "" : who;
  }

  /**
   * Give {@code committer} (a fenced one) the destination's store paused for the actor it is
   * made for (the actor object: a thread of an earlier scenario's actor of the same name finds
   * its own actor crashed),
   * after measuring, unpaused, whether the store fences (once per store and JVM).
   */
  static PathOutputCommitter drive(PathOutputCommitter committer, Path out, Configuration conf)
      throws IOException {
    StoreUrl dest = StoreUrl.parse(out.toUri().toString());
    String key = dest.scheme() + "://" + dest.bucket() + "|"
        + conf.getTrimmed("fs.s3a.endpoint", "") + "|" + conf.getTrimmed("fs.s3a.access.key", "");
    CommitStore store = STORES.computeIfAbsent(key, k -> S3CommitStore.create(conf,
        dest.scheme(), dest.bucket()));
    StoreFencing.decide(store, dest.dirPrefix(),
        conf.getBoolean(FencedOptions.CONDITIONAL_ENABLED, true));
    CommitDriver.Actor owner = CommitDriver.constructing();
    return owner == null ? committer
        : ((FencedCommitter) committer).withStore(new Paused(store, owner));
  }

  /** The store with {@code actor} stopped before each request ({@link CommitDriver}). */
  static final class Paused extends ForwardingCommitStore {
    private final CommitDriver.Actor actor;

    Paused(CommitStore store, CommitDriver.Actor actor) {
      super(store);
      this.actor = actor;
    }

    private void before(String kind, String key, String other) throws IOException {
      CommitDriver.before(actor, kind + "\t" + key + (other.isEmpty() ? "" : "\t" + other));
    }

    // Passed on unpaused: name() (the store check's decision is cached under the store's
    // name) and the questions about the store (conditionalComplete: measured with the store
    // check, unpaused).

    @Override
    public void put(String key, byte[] data, boolean ifNoneMatch) throws IOException {
      before("PutObject", key, "");
      delegate().put(key, data, ifNoneMatch);
    }

    @Override
    public byte[] get(String key) throws IOException {
      before("GetObject", key, "");
      return delegate().get(key);
    }

    @Override
    public ObjectEntry head(String key) throws IOException {
      before("HeadObject", key, "");
      return delegate().head(key);
    }

    @Override
    public void delete(Collection<String> keys) throws IOException {
      List<String> sorted = keys.stream().sorted().collect(java.util.stream.Collectors.toList());
      if (sorted.isEmpty()) {
        delegate().delete(keys);
        return;
      }
      before("DeleteObjects", sorted.get(0), String.join(",", sorted.subList(1, sorted.size())));
      delegate().delete(keys);
    }

    @Override
    public List<ObjectEntry> list(String prefix) throws IOException {
      before("ListObjectsV2", prefix, "");
      return delegate().list(prefix);
    }

    @Override
    public KeyListing listFrom(String prefix, String startAfter, String lastKey, int maxPages)
        throws IOException {
      before("ListObjectsV2", prefix, "");
      return delegate().listFrom(prefix, startAfter, lastKey, maxPages);
    }

    @Override
    public List<String> listPrefixes(String prefix) throws IOException {
      before("ListObjectsV2", prefix, "");
      return delegate().listPrefixes(prefix);
    }

    @Override
    public List<PendingUpload> listUploads(String prefix) throws IOException {
      before("ListMultipartUploads", prefix, "");
      return delegate().listUploads(prefix);
    }

    @Override
    public String complete(String key, String uploadId, List<String> etags,
        boolean ifNoneMatch) throws IOException {
      before("CompleteMultipartUpload", key, "");
      return delegate().complete(key, uploadId, etags, ifNoneMatch);
    }

    @Override
    public boolean abort(String key, String uploadId) throws IOException {
      before("AbortMultipartUpload", key, "");
      return delegate().abort(key, uploadId);
    }

    /** Closes nothing: the store is every actor's (one per bucket and JVM, kept in STORES). */
    @Override
    public void close() {
    }
  }
}
