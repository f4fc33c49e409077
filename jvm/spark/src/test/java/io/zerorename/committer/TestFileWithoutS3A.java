package io.zerorename.committer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.reflect.InvocationTargetException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A {@code file://} job never loads S3A's classes (hadoop-aws is only provided): the whole job
 * runs in a class loader that hides {@code org.apache.hadoop.fs.s3a}, with S3A's in-memory
 * option on in the job's configuration.
 */
class TestFileWithoutS3A {
  static final String TRACKER = "org.apache.hadoop.fs.s3a.commit.magic.InMemoryMagicCommitTracker";
  static final String ADAPTER = "io.zerorename.committer.s3a.S3AMemoryUploads";

  @TempDir
  java.nio.file.Path tmp;

  /** Loads zerorename's classes itself (child first); S3A's are not there. */
  static final class WithoutS3A extends URLClassLoader {
    WithoutS3A(URL[] urls, ClassLoader parent) {
      super(urls, parent);
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
      synchronized (getClassLoadingLock(name)) {
        if (name.startsWith("org.apache.hadoop.fs.s3a.")) {
          throw new ClassNotFoundException(name + " (hidden from this test's loader)");
        }
        if (!name.startsWith("io.zerorename.")) {
          return super.loadClass(name, resolve);
        }
        Class<?> c = findLoadedClass(name);
        if (c == null) {
          c = findClass(name);
        }
        if (resolve) {
          resolveClass(c);
        }
        return c;
      }
    }

    boolean loaded(String name) {
      return findLoadedClass(name) != null;
    }
  }

  private static WithoutS3A loader() {
    URL classes = FencedCommitter.class.getProtectionDomain().getCodeSource().getLocation();
    return new WithoutS3A(new URL[] {classes}, TestFileWithoutS3A.class.getClassLoader());
  }

  @Test
  void theLoaderHidesS3AFromTheAdapter() throws Exception {
    try (WithoutS3A loader = loader()) {
      assertThrows(ClassNotFoundException.class, () -> loader.loadClass(TRACKER));
      Object adapter = loader.loadClass(ADAPTER).getConstructor().newInstance();
      InvocationTargetException e = assertThrows(InvocationTargetException.class,
          () -> adapter.getClass().getMethod("uploads", String.class, String.class,
              String.class).invoke(adapter, "a", "b", "c"));
      assertTrue(e.getCause() instanceof NoClassDefFoundError, e.getCause().toString());
    }
  }

  @Test
  void aFileJobRunsWithoutS3A() throws Exception {
    java.nio.file.Path out = tmp.resolve("out");
    Configuration conf = new Configuration();
    conf.set(FencedOptions.S3A_UUID, "no-s3a");
    conf.setBoolean(FencedOptions.S3A_TRACK_IN_MEMORY, true);
    TaskAttemptContext ctx = new TaskAttemptContextImpl(conf,
        new TaskAttemptID("jt", 1, TaskType.MAP, 0, 0));
    try (WithoutS3A loader = loader()) {
      PathOutputCommitter committer = (PathOutputCommitter) loader
          .loadClass(FencedCommitter.class.getName())
          .getConstructor(Path.class, TaskAttemptContext.class)
          .newInstance(new Path("file://" + out), ctx);
      assertSame(loader, committer.getClass().getClassLoader());
      committer.setupJob(ctx);
      committer.setupTask(ctx);
      write(new Path(committer.getWorkPath(), "p=1/part-0"), conf, "on disk");
      assertTrue(committer.needsTaskCommit(ctx));
      committer.commitTask(ctx);
      committer.commitJob(ctx);
      assertEquals("on disk", Files.readString(out.resolve("p=1/part-0")));
      assertTrue(Files.exists(out.resolve("_SUCCESS")));
      assertTrue(loader.loaded(FencedCommitter.class.getName()));
      assertFalse(loader.loaded(ADAPTER), "the S3A adapter was loaded for a file:// job");
    }
  }

  private static void write(Path path, Configuration conf, String text) throws IOException {
    FileSystem fs = path.getFileSystem(conf);
    try (OutputStream s = fs.create(path, false)) {
      s.write(text.getBytes(StandardCharsets.UTF_8));
    }
  }
}
