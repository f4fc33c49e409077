package zerorename.conformance;

import java.io.IOException;
import java.net.URI;
import java.util.EnumSet;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.PathFilter;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.util.Progressable;

/**
 * HDFS itself: {@link DistributedFileSystem} talking to the MiniDFSCluster of
 * {@link MiniDfsCommitDriver}, under the scheme {@code hlfs} (so that the same paths name a file
 * on the imitation, {@link HdfsLikeFileSystem}, and on the real thing), with the same hook before
 * every outermost call, named with the same kinds.
 *
 * <p>Every call HDFS's client serves for the committers is hooked here: the public entry points
 * a committer reaches ({@code create}, {@code createNonRecursive}, {@code createFile},
 * {@code open}, {@code getFileStatus}, {@code listStatus}, {@code listStatusIterator},
 * {@code listLocatedStatus}, {@code delete}, {@code mkdirs}, both {@code rename}s); the ones
 * FileSystem builds on them ({@code exists}, {@code openFile}) reach a hooked one.  Nested
 * calls are not hooked again.
 */
public class HdfsHookedFileSystem extends DistributedFileSystem {
  /** The NameNode every instance talks to: set by the driver once its cluster is up. */
  static volatile URI namenode;

  private static final URI NAME = URI.create("hlfs:///");

  @Override
  public URI getUri() {
    return NAME;
  }

  @Override
  public String getScheme() {
    return "hlfs";
  }

  @Override
  public void initialize(URI uri, Configuration conf) throws IOException {
    if (namenode == null) {
      throw new IOException("no MiniDFSCluster is running in this JVM");
    }
    super.initialize(namenode, conf);
  }

  private <T> T hooked(String kind, Path path, HdfsLikeFileSystem.Call<T> body)
      throws IOException {
    return HdfsLikeFileSystem.hookedCall(kind, path, null, body);
  }

  private <T> T hooked(String kind, Path path, Path other, HdfsLikeFileSystem.Call<T> body)
      throws IOException {
    return HdfsLikeFileSystem.hookedCall(kind, path, other, body);
  }

  @Override
  public FileStatus getFileStatus(Path f) throws IOException {
    return hooked("stat", f, () -> super.getFileStatus(f));
  }

  @Override
  public boolean exists(Path f) throws IOException {
    return hooked("stat", f, () -> super.exists(f));
  }

  @Override
  public FileStatus[] listStatus(Path f) throws IOException {
    return hooked("list", f, () -> super.listStatus(f));
  }

  @Override
  public RemoteIterator<FileStatus> listStatusIterator(Path f) throws IOException {
    return hooked("list", f, () -> super.listStatusIterator(f));
  }

  @Override
  protected RemoteIterator<LocatedFileStatus> listLocatedStatus(Path f, PathFilter filter)
      throws IOException {
    return hooked("list", f, () -> super.listLocatedStatus(f, filter));
  }

  @Override
  public boolean delete(Path f, boolean recursive) throws IOException {
    return hooked("delete", f, () -> super.delete(f, recursive));
  }

  @Override
  public boolean mkdirs(Path f, FsPermission permission) throws IOException {
    return hooked("mkdirs", f, () -> super.mkdirs(f, permission));
  }

  @Override
  public boolean mkdirs(Path f) throws IOException {
    return hooked("mkdirs", f, () -> super.mkdirs(f));
  }

  @Override
  public FSDataInputStream open(Path f, int bufferSize) throws IOException {
    return hooked("open", f, () -> super.open(f, bufferSize));
  }

  @Override
  public FSDataOutputStream create(Path f, FsPermission permission, boolean overwrite,
      int bufferSize, short replication, long blockSize, Progressable progress)
      throws IOException {
    return hooked("create", f, () -> super.create(f, permission, overwrite, bufferSize,
        replication, blockSize, progress));
  }

  @Override
  public FSDataOutputStream create(Path f, FsPermission permission,
      EnumSet<CreateFlag> flags, int bufferSize, short replication, long blockSize,
      Progressable progress, Options.ChecksumOpt checksum) throws IOException {
    return hooked("create", f, () -> super.create(f, permission, flags, bufferSize,
        replication, blockSize, progress, checksum));
  }

  @Override
  public FSDataOutputStream createNonRecursive(Path f, FsPermission permission,
      EnumSet<CreateFlag> flags, int bufferSize, short replication, long blockSize,
      Progressable progress) throws IOException {
    return hooked("create", f, () -> super.createNonRecursive(f, permission, flags, bufferSize,
        replication, blockSize, progress));
  }

  /** The builder's {@code build()} creates the file with no other call of the actor's between:
   * the pause is here. */
  @Override
  public HdfsDataOutputStreamBuilder createFile(Path f) {
    try {
      return hooked("create", f, () -> super.createFile(f));
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @Override
  public boolean rename(Path src, Path dst) throws IOException {
    return hooked("rename", src, dst, () -> super.rename(src, dst));
  }

  @Override
  public void rename(Path src, Path dst, Options.Rename... options) throws IOException {
    hooked("rename", src, dst, () -> {
      super.rename(src, dst, options);
      return null;
    });
  }
}
