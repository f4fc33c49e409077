package zerorename.conformance;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FileUtil;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.MiniDFSCluster;

/**
 * The filesystem rules the committers rely on, probed on the imitation
 * ({@link HdfsLikeFileSystem}) and on HDFS (a MiniDFSCluster through
 * {@link HdfsHookedFileSystem}) side by side: each probe starts from the same small tree, makes
 * one call, and prints the call's answer (a value or the exception's class) and the tree after,
 * one line per probe: {@code NAME \t HDFS \t IMITATION...}.  Nothing is paused (no actor).
 *
 * <p>Usage: {@code java -cp ... zerorename.conformance.FsRules [IMITATION_CLASS...]} (default
 * {@link HdfsLikeFileSystem}; a test adds a deliberately wrong one).
 */
public final class FsRules {
  private FsRules() {
  }

  /** One call on a probe's directory. */
  interface Probe {
    Object run(FileSystem fs, Path d) throws IOException;
  }

  /** The probes by name; each runs in a fresh directory holding {@code f} (a file, "f"),
   * {@code g} (a file, "g"), {@code e/} (empty), {@code s/x} (a file in a directory) and
   * {@code t/x} (another). */
  static Map<String, Probe> probes() {
    Map<String, Probe> p = new LinkedHashMap<>();
    p.put("rename a missing source", (fs, d) -> fs.rename(new Path(d, "nope"), new Path(d, "h")));
    p.put("rename a file onto a file", (fs, d) -> fs.rename(new Path(d, "f"), new Path(d, "g")));
    p.put("rename a file onto itself", (fs, d) -> fs.rename(new Path(d, "f"), new Path(d, "f")));
    p.put("rename a directory onto itself",
        (fs, d) -> fs.rename(new Path(d, "s"), new Path(d, "s")));
    p.put("rename a file into a directory",
        (fs, d) -> fs.rename(new Path(d, "f"), new Path(d, "e")));
    p.put("rename a directory into an empty directory",
        (fs, d) -> fs.rename(new Path(d, "s"), new Path(d, "e")));
    p.put("rename a file into a directory holding its name",
        (fs, d) -> fs.rename(new Path(d, "s/x"), new Path(d, "t")));
    p.put("rename a directory into a non-empty directory",
        (fs, d) -> fs.rename(new Path(d, "s"), new Path(d, "t")));
    p.put("rename into a missing parent",
        (fs, d) -> fs.rename(new Path(d, "f"), new Path(d, "no/h")));
    p.put("rename under a file", (fs, d) -> fs.rename(new Path(d, "f"), new Path(d, "g/h")));
    p.put("rename two levels under a file",
        (fs, d) -> fs.rename(new Path(d, "f"), new Path(d, "g/h/i")));
    p.put("rename a missing source under a file",
        (fs, d) -> fs.rename(new Path(d, "nope"), new Path(d, "g/h")));
    p.put("rename a directory into its own subtree",
        (fs, d) -> fs.rename(new Path(d, "s"), new Path(d, "s/y")));
    p.put("rename a directory onto a file",
        (fs, d) -> fs.rename(new Path(d, "s"), new Path(d, "f")));
    p.put("rename a file to a new name", (fs, d) -> fs.rename(new Path(d, "f"), new Path(d, "h")));
    p.put("delete a missing path", (fs, d) -> fs.delete(new Path(d, "nope"), true));
    p.put("delete a non-empty directory, not recursively",
        (fs, d) -> fs.delete(new Path(d, "s"), false));
    p.put("delete an empty directory, not recursively",
        (fs, d) -> fs.delete(new Path(d, "e"), false));
    p.put("delete a directory recursively", (fs, d) -> fs.delete(new Path(d, "s"), true));
    p.put("list a missing path", (fs, d) -> names(fs.listStatus(new Path(d, "nope"))));
    p.put("list a file", (fs, d) -> names(fs.listStatus(new Path(d, "f"))));
    p.put("list a directory (order)", (fs, d) -> names(fs.listStatus(d)));
    p.put("list a directory by iterator", (fs, d) -> {
      List<String> found = new ArrayList<>();
      var it = fs.listStatusIterator(d);
      while (it.hasNext()) {
        found.add(it.next().getPath().getName());
      }
      return found;
    });
    p.put("stat a missing path", (fs, d) -> fs.getFileStatus(new Path(d, "nope")).isFile());
    p.put("stat a directory", (fs, d) -> fs.getFileStatus(new Path(d, "s")).isDirectory());
    p.put("open a missing file", (fs, d) -> {
      fs.open(new Path(d, "nope")).close();
      return "opened";
    });
    p.put("open a directory", (fs, d) -> {
      fs.open(new Path(d, "s")).close();
      return "opened";
    });
    p.put("create over a directory", (fs, d) -> write(fs, new Path(d, "s"), true));
    p.put("create over a file, no overwrite", (fs, d) -> write(fs, new Path(d, "f"), false));
    p.put("create over a file, overwrite", (fs, d) -> write(fs, new Path(d, "f"), true));
    p.put("create under a file", (fs, d) -> write(fs, new Path(d, "f/h"), true));
    p.put("create two levels under a file", (fs, d) -> write(fs, new Path(d, "f/h/i"), true));
    p.put("create non-recursively in a missing directory", (fs, d) -> {
      fs.createNonRecursive(new Path(d, "no/h"), true, 4096, (short) 1, 1 << 20, null).close();
      return "written";
    });
    p.put("create non-recursively under a file", (fs, d) -> {
      fs.createNonRecursive(new Path(d, "f/h"), true, 4096, (short) 1, 1 << 20, null).close();
      return "written";
    });
    p.put("create in a missing directory", (fs, d) -> write(fs, new Path(d, "no/h"), true));
    p.put("mkdirs where a file is", (fs, d) -> fs.mkdirs(new Path(d, "f")));
    p.put("mkdirs under a file", (fs, d) -> fs.mkdirs(new Path(d, "f/h")));
    p.put("mkdirs two levels under a file", (fs, d) -> fs.mkdirs(new Path(d, "f/h/i")));
    p.put("mkdirs where a directory is", (fs, d) -> fs.mkdirs(new Path(d, "s")));
    p.put("exists on a missing path", (fs, d) -> fs.exists(new Path(d, "nope")));
    return p;
  }

  private static List<String> names(FileStatus[] found) {
    List<String> names = new ArrayList<>();
    for (FileStatus s : found) {
      names.add(s.getPath().getName());
    }
    return names;
  }

  private static String write(FileSystem fs, Path path, boolean overwrite) throws IOException {
    try (OutputStream os = fs.create(path, overwrite)) {
      os.write("n".getBytes(StandardCharsets.UTF_8));
    }
    return "written";
  }

  private static void setUp(FileSystem fs, Path d) throws IOException {
    fs.mkdirs(new Path(d, "e"));
    write(fs, new Path(d, "f"), true);
    try (OutputStream os = fs.create(new Path(d, "g"), true)) {
      os.write('g');
    }
    write(fs, new Path(d, "s/x"), true);
    write(fs, new Path(d, "t/x"), true);
  }

  /** The tree under {@code d}: each path, a directory with a trailing slash. */
  static String tree(FileSystem fs, Path d, String rel) throws IOException {
    StringBuilder s = new StringBuilder();
    FileStatus[] found = fs.listStatus(d);
    java.util.Arrays.sort(found, java.util.Comparator.comparing(c -> c.getPath().getName()));
    for (FileStatus c : found) {
      String r = rel + c.getPath().getName();
      if (c.isDirectory()) {
        s.append(r).append("/ ").append(tree(fs, c.getPath(), r + "/"));
      } else {
        s.append(r).append(' ');
      }
    }
    return s.toString();
  }

  static String answer(FileSystem fs, Path d, Probe probe) throws IOException {
    fs.delete(d, true);
    setUp(fs, d);
    String result;
    try {
      result = String.valueOf(probe.run(fs, d));
    } catch (IOException | RuntimeException e) {
      result = "throws " + e.getClass().getSimpleName();
    }
    return result + " | " + tree(fs, d, "").trim();
  }

  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out),
        true, StandardCharsets.UTF_8);
    System.setOut(System.err);
    String[] imitations = args.length > 0 ? args : new String[] {
        HdfsLikeFileSystem.class.getName()};
    File base = Files.createTempDirectory("zerorename-fsrules-").toFile();
    Configuration conf = MiniDfsCommitDriver.clusterConf(base);
    MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf, base).numDataNodes(1).build();
    try {
      cluster.waitActive();
      HdfsHookedFileSystem.namenode = cluster.getURI();
      for (String line : run(conf, base, imitations)) {
        out.println(line);
      }
    } finally {
      FileSystem.closeAll();
      cluster.shutdown(true);
      FileUtil.fullyDelete(base);
    }
    System.exit(0);
  }

  /** Every probe on HDFS (the running cluster {@code conf} names) and on each imitation class,
   * in directories below {@code base} (local, and the same path on HDFS): one line each. */
  static List<String> run(Configuration conf, File base, String[] imitations)
      throws IOException {
    List<String> lines = new ArrayList<>();
    List<FileSystem> systems = new ArrayList<>();
    systems.add(FileSystem.get(URI.create("hlfs:///"), conf));
    for (String imitation : imitations) {
      Configuration imitationConf = new Configuration(conf);
      imitationConf.set("fs.hlfs.impl", imitation);
      imitationConf.setBoolean("fs.hlfs.impl.disable.cache", true);
      systems.add(FileSystem.get(URI.create("hlfs:///"), imitationConf));
    }
    Path root = new Path(new File(base, "probes-" + System.nanoTime()).getAbsolutePath());
    int n = 0;
    for (Map.Entry<String, Probe> e : probes().entrySet()) {
      Path d = new Path(root, "p" + (n++));
      StringBuilder line = new StringBuilder(e.getKey());
      for (FileSystem fs : systems) {
        line.append('\t').append(answer(fs, d, e.getValue()));
      }
      lines.add(line.toString());
    }
    systems.get(0).delete(root, true);
    FileUtil.fullyDelete(new File(root.toUri().getPath()));
    for (FileSystem fs : systems.subList(1, systems.size())) {
      fs.close();
    }
    return lines;
  }
}
