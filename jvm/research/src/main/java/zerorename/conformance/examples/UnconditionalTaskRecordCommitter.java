package zerorename.conformance.examples;

import java.io.IOException;
import java.util.Collection;
import java.util.List;

import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.TaskAttemptContext;

import io.zerorename.committer.FencedCommitter;
import io.zerorename.committer.FencedLayout;
import io.zerorename.committer.store.CommitStore;
import io.zerorename.committer.store.ObjectEntry;
import io.zerorename.committer.store.PendingUpload;

/**
 * A deliberately broken fenced committer, for {@code zerorename check --target hadoop
 * --committer hadoop:<class>} to catch: it saves a task's record with a plain PUT, without
 * {@code If-None-Match: *}, so a second attempt of a task that commits replaces the first
 * one's record instead of being refused, and the job commit publishes the files of an attempt
 * the driver never accepted. Everything else is the production committer. Never use it for
 * anything else.
 */
public class UnconditionalTaskRecordCommitter extends FencedCommitter {
  private CommitStore unconditional;

  public UnconditionalTaskRecordCommitter(Path outputPath, TaskAttemptContext context)
      throws IOException {
    super(outputPath, context);
  }

  @Override
  protected synchronized CommitStore store() {
    CommitStore real = super.store();
    if (unconditional == null || ((Unconditional) unconditional).store != real) {
      unconditional = new Unconditional(real);
    }
    return unconditional;
  }

  /** The store, dropping If-None-Match on the task records' PUTs. */
  private static final class Unconditional implements CommitStore {
    private final CommitStore store;

    Unconditional(CommitStore store) {
      this.store = store;
    }

    @Override
    public String name() {
      return store.name();
    }

    @Override
    public void put(String key, byte[] data, boolean ifNoneMatch) throws IOException {
      store.put(key, data, ifNoneMatch && !key.endsWith(FencedLayout.PENDINGSET));
    }

    @Override
    public byte[] get(String key) throws IOException {
      return store.get(key);
    }

    @Override
    public ObjectEntry head(String key) throws IOException {
      return store.head(key);
    }

    @Override
    public void delete(Collection<String> keys) throws IOException {
      store.delete(keys);
    }

    @Override
    public List<ObjectEntry> list(String prefix) throws IOException {
      return store.list(prefix);
    }

    @Override
    public List<String> listPrefixes(String prefix) throws IOException {
      return store.listPrefixes(prefix);
    }

    @Override
    public List<PendingUpload> listUploads(String prefix) throws IOException {
      return store.listUploads(prefix);
    }

    @Override
    public String complete(String key, String uploadId, List<String> etags,
        boolean ifNoneMatch) throws IOException {
      return store.complete(key, uploadId, etags, ifNoneMatch);
    }

    @Override
    public boolean abort(String key, String uploadId) throws IOException {
      return store.abort(key, uploadId);
    }

    @Override
    public boolean atomicByConstruction() {
      return store.atomicByConstruction();
    }
  }
}
