package zerorename.conformance;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.lib.output.FileOutputCommitter;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;
import org.apache.hadoop.mapreduce.lib.output.committer.manifest.ManifestCommitter;
import org.apache.hadoop.mapreduce.task.JobContextImpl;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;

/**
 * Runs Hadoop's own committers for several actors (job drivers, task attempts), one thread
 * each, and stops every actor before each of its outermost filesystem calls, so that the
 * caller (Python, over stdin/stdout, one command per line, one answer per line) decides the
 * interleaving and where an actor crashes.
 *
 * <p>Commands (tab-separated): {@code reset}, {@code option KEY VALUE}, {@code call ACTOR
 * COMMITTER DEST JOB JOBATTEMPT TASK ATTEMPT METHOD [ARG [HEXDATA [JOBUUID]]]} (JOBUUID, the
 * job's write UUID, defaults to JOB), {@code step ACTOR},
 * {@code crash ACTOR} (its process dies: every later call throws), {@code kill ACTOR} (the
 * call it waits at throws, as a killed task's does; the actor lives on), {@code files DIR}. Answers: {@code pending KIND PATH [PATH2]}, {@code
 * done VALUE} (a fenced committer's {@code commit_task}: the attempt that committed the task), {@code failed MESSAGE}, {@code files ...}, {@code ok}, {@code error MESSAGE}.
 */
public final class CommitDriver {
  private static final Object LOCK = new Object();
  private static final long WAIT_MS = 20_000;

  /**
   * What differs between the filesystems the driver runs committers on: the configuration,
   * the committer classes, how an actor's calls run (S3A: as the actor's own user, so that
   * each actor has its own cached filesystem and request interceptor) and what a reset ends.
   */
  interface Backend {
    /** Settings of every actor's configuration, before the scenario's options. */
    void configure(Configuration conf, String committer, String actor);

    PathOutputCommitter committer(String committer, Path out, TaskAttemptContext task)
        throws IOException;

    /** Run one committer call of {@code actor}. */
    String run(String actor, java.util.concurrent.Callable<String> body) throws Exception;

    /** The scenario ended: release what its actors held. */
    void reset(java.util.Collection<String> actors);

    /** Everything under {@code dir} for the {@code files} command (default: the local disk). */
    default void walk(String dir, List<String> found) throws IOException {
      CommitDriver.walk(new File(dir), "", found);
    }

    /** The {@code mkdirs DIR} command: a scenario's root, made outside any actor's call. */
    default void mkdirs(String dir) throws IOException {
      new File(dir).mkdirs();
    }

    /** The {@code remove DIR} command: a finished scenario's root, removed. */
    default void remove(String dir) throws IOException {
      org.apache.hadoop.fs.FileUtil.fullyDelete(new File(dir));
    }

    /** A command of this backend's own: its answer, or null (an unknown command). */
    default String command(String[] words) throws Exception {
      return null;
    }
  }

  /** Hadoop's FileOutputCommitter and ManifestCommitter on {@link HdfsLikeFileSystem}. */
  static final class HdfsLike implements Backend {
    @Override
    public void configure(Configuration conf, String committer, String actor) {
      conf.set("fs.hlfs.impl", HdfsLikeFileSystem.class.getName());
      conf.setBoolean("fs.hlfs.impl.disable.cache", true);
      conf.setInt("mapreduce.fileoutputcommitter.algorithm.version",
          committer.equals("v2") ? 2 : 1);
      conf.setInt("mapreduce.manifest.committer.io.threads", 1);
    }

    @Override
    public PathOutputCommitter committer(String committer, Path out, TaskAttemptContext task)
        throws IOException {
      if (isClassName(committer)) {
        return byClass(committer, out, task);
      }
      return committer.equals("manifest")
          ? new ManifestCommitter(out, task) : new FileOutputCommitter(out, task);
    }

    @Override
    public String run(String actor, java.util.concurrent.Callable<String> body)
        throws Exception {
      return body.call();
    }

    @Override
    public void reset(java.util.Collection<String> actors) {
    }
  }

  private static Backend backend = new HdfsLike();

  /** Whether a committer name is a class name (a user's {@code hadoop:<class>}) rather than
   * one of the built-in short names. */
  static boolean isClassName(String committer) {
    return committer.indexOf('.') >= 0;
  }

  /** zerorename's fenced committer (the class or a subclass), by name: the production jar is
   * on the class path only when the check names it, so no other committer loads its classes. */
  static boolean isFenced(Object committer) {
    for (Class<?> c = committer.getClass(); c != null; c = c.getSuperclass()) {
      if (c.getName().equals("io.zerorename.committer.FencedCommitter")) {
        return true;
      }
    }
    return false;
  }

  /**
   * A {@link PathOutputCommitter} of any class on the class path, built with the constructor
   * every path output committer has: {@code (Path outputPath, TaskAttemptContext context)}.
   */
  static PathOutputCommitter byClass(String className, Path out, TaskAttemptContext task)
      throws IOException {
    Class<?> found;
    try {
      found = Class.forName(className, true, Thread.currentThread().getContextClassLoader());
    } catch (ClassNotFoundException e) {
      throw new IOException("no class " + className + " on the class path", e);
    }
    if (!PathOutputCommitter.class.isAssignableFrom(found)) {
      throw new IOException(className + " is not a " + PathOutputCommitter.class.getName());
    }
    try {
      return found.asSubclass(PathOutputCommitter.class)
          .getConstructor(Path.class, TaskAttemptContext.class).newInstance(out, task);
    } catch (NoSuchMethodException e) {
      throw new IOException(className + " has no public constructor (Path, "
          + "TaskAttemptContext)", e);
    } catch (java.lang.reflect.InvocationTargetException e) {
      Throwable cause = e.getCause();
      if (cause instanceof IOException) {
        throw (IOException) cause;
      }
      throw new IOException(className + "'s constructor failed: " + cause, cause);
    } catch (ReflectiveOperationException e) {
      throw new IOException("cannot construct " + className + ": " + e, e);
    }
  }

  /** One actor: its committer, and where its current call stands. */
  static final class Actor {
    final String name;
    PathOutputCommitter committer;
    JobContext job;
    TaskAttemptContext task;
    String state = "idle";  // running, pending, done, failed
    String answer = "";
    boolean permit;
    boolean crashed;
    boolean killed;  // the call waited at throws once; the actor lives on (a killed task)
    Thread thread;  // the current (or last) call's thread

    Actor(String name) {
      this.name = name;
    }

    boolean settled() {
      return !state.equals("running");
    }
  }

  private static final InheritableThreadLocal<Actor> CURRENT = new InheritableThreadLocal<>();
  /** The actor whose committer is being constructed on this thread. */
  private static final ThreadLocal<Actor> CONSTRUCTING = new ThreadLocal<>();
  private static final Map<String, Actor> ACTORS =
      new java.util.concurrent.ConcurrentHashMap<>();
  private static final Map<String, String> OPTIONS = new TreeMap<>();

  /** The current scenario's options (set with {@code option} after its {@code reset}). */
  static Map<String, String> options() {
    return java.util.Collections.unmodifiableMap(OPTIONS);
  }

  private CommitDriver() {
  }

  /** The hook of {@link HdfsLikeFileSystem}: announce the call, wait for a permit. */
  static void before(String kind, Path path, Path other) throws IOException {
    Actor actor = CURRENT.get();
    if (actor == null) {
      return;  // not an actor's call (set-up of the test itself)
    }
    pause(actor, kind + "\t" + path.toUri().getPath()
        + (other == null ? "" : "\t" + other.toUri().getPath()));
  }

  /** The hook of a request interceptor that knows its actor by name (S3A: one filesystem,
   * so one interceptor, per actor, whichever thread of it sends the request). */
  static void before(String actorName, String call) throws IOException {
    Actor actor;
    synchronized (LOCK) {
      actor = ACTORS.get(actorName);
    }
    if (actor == null) {
      return;
    }
    pause(actor, call);
  }

  /** The actor whose committer is being constructed on this thread (null: none), for a hook
   * that must stop that actor object, not a later one of the same name (a thread of an actor
   * of an earlier scenario, still running after the reset, finds its actor crashed). */
  static Actor constructing() {
    return CONSTRUCTING.get();
  }

  /** The actor of this scenario named {@code name}, if any. */
  static Actor registered(String name) {
    synchronized (LOCK) {
      return ACTORS.get(name);
    }
  }

  /** The actor whose call runs on this thread (or on the thread that started it), if any. */
  static Actor current() {
    return CURRENT.get();
  }

  /** The hook of a request path that knows its actor object: announce, wait for a permit. */
  static void before(Actor actor, String call) throws IOException {
    pause(actor, call);
  }

  private static void pause(Actor actor, String call) throws IOException {
    synchronized (LOCK) {
      if (actor.crashed) {
        throw new IOException("injected crash of " + actor.name);
      }
      actor.state = "pending";
      actor.answer = call;
      LOCK.notifyAll();
      while (!actor.permit && !actor.crashed && !actor.killed) {
        try {
          LOCK.wait();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IOException("interrupted", e);
        }
      }
      actor.permit = false;
      if (actor.killed) {
        actor.killed = false;
        actor.state = "running";
        throw new java.io.InterruptedIOException("task attempt " + actor.name + " killed");
      }
      if (actor.crashed) {
        actor.state = "running";
        throw new IOException("injected crash of " + actor.name);
      }
      actor.state = "running";
    }
  }

  private static Configuration base;

  /** The defaults (core-default.xml and the rest), parsed once: each actor's configuration is
   * a copy (parsing them again for every actor of every scenario cost tens of milliseconds). */
  private static synchronized Configuration base() {
    if (base == null) {
      base = new Configuration();
      base.size();  // load the resources now
    }
    return base;
  }

  /** An actor's configuration: the job's {@code jobUuid} is Spark's per-job write UUID (the
   * model's job identity: two jobs the model gives one job ID may still have two UUIDs). */
  private static Configuration conf(String committer, int jobAttempt, String jobUuid,
      String actor) {
    Configuration conf = new Configuration(base());
    backend.configure(conf, committer, actor);
    conf.setInt("mapreduce.job.application.attempt.id", jobAttempt);
    conf.set("spark.sql.sources.writeJobUUID", jobUuid);
    for (Map.Entry<String, String> e : OPTIONS.entrySet()) {
      conf.set(e.getKey(), e.getValue());
    }
    return conf;
  }

  private static Actor actor(String name, String committer, String dest, String jobName,
      String jobUuid, int jobAttempt, int task, int attempt) throws Exception {
    Actor actor = ACTORS.get(name);
    if (actor != null) {
      return actor;
    }
    actor = new Actor(name);
    Configuration conf = conf(committer, jobAttempt, jobUuid, name);
    JobID jobId = new JobID(jobName, 0);
    TaskAttemptID id = new TaskAttemptID(jobName, 0, TaskType.MAP, Math.max(task, 0),
        Math.max(attempt, 0));
    actor.job = new JobContextImpl(conf, jobId);
    actor.task = new TaskAttemptContextImpl(conf, id);
    Path out = new Path(dest);
    // run as the actor (its own filesystem), but unpaused: no actor is registered yet
    final Actor made = actor;
    CONSTRUCTING.set(made);
    try {
      backend.run(name, () -> {
        made.committer = backend.committer(committer, out, made.task);
        return "";
      });
    } finally {
      CONSTRUCTING.remove();
    }
    ACTORS.put(name, actor);
    return actor;
  }

  private static String invoke(Actor a, String method, String arg, byte[] data)
      throws Exception {
    switch (method) {
      case "setup_job":
        a.committer.setupJob(a.job);
        return "";
      case "setup_task":
        a.committer.setupTask(a.task);
        return "";
      case "write": {
        Path file = new Path(a.committer.getWorkPath(), arg);
        FileSystem fs = file.getFileSystem(a.task.getConfiguration());
        try (OutputStream os = fs.create(file, true)) {
          os.write(data);
        }
        return "";
      }
      case "needs_task_commit":
        return String.valueOf(a.committer.needsTaskCommit(a.task));
      case "commit_task":
        a.committer.commitTask(a.task);
        // the fenced committer: the attempt whose record commits the task
        return isFenced(a.committer) ? FencedDriving.committedBy(a.committer) : "";
      case "abort_task":
        a.committer.abortTask(a.task);
        return "";
      case "commit_job":
        a.committer.commitJob(a.job);
        return "";
      case "abort_job":
        a.committer.abortJob(a.job, JobStatus.State.FAILED);
        return "";
      case "cleanup_job":
        cleanupJob(a);
        return "";
      case "recover_task":
        // ARG names the task to recover (the recovering actor is a job driver, whose own
        // context would name task 0 whichever task the model recovers)
        a.committer.recoverTask(arg.isEmpty() ? a.task : taskOf(a, Integer.parseInt(arg)));
        return "";
      default:
        throw new IllegalArgumentException("no method " + method);
    }
  }

  /** A context of task {@code task} of the actor's job, with the actor's configuration. */
  private static TaskAttemptContext taskOf(Actor a, int task) {
    JobID job = a.job.getJobID();
    return new TaskAttemptContextImpl(a.task.getConfiguration(),
        new TaskAttemptID(job.getJtIdentifier(), job.getId(), TaskType.MAP, task, 0));
  }

  private static String oneLine(Throwable t) {
    StringBuilder s = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (s.length() > 0) {
        s.append(" <- ");
      }
      s.append(c.getClass().getSimpleName()).append(": ").append(c.getMessage());
      if (c.getCause() == c) {
        break;
      }
    }
    return s.toString().replace('\n', ' ').replace('\t', ' ');
  }

  /** Wait (holding LOCK) until the actor is pending, done or failed; answer its state. */
  private static String settle(Actor a) throws InterruptedException {
    long deadline = System.currentTimeMillis() + WAIT_MS;
    while (!a.settled()) {
      long left = deadline - System.currentTimeMillis();
      if (left <= 0) {
        return "error\t" + a.name + " did not reach a filesystem call or an end in "
            + WAIT_MS + " ms";
      }
      LOCK.wait(left);
    }
    return a.state + "\t" + a.answer;
  }

  private static String call(String[] w) throws Exception {
    // the job's write UUID (field 11) defaults to its job ID
    String jobUuid = w.length > 11 && !w[11].isEmpty() ? w[11] : w[4];
    Actor a = actor(w[1], w[2], w[3], w[4], jobUuid, Integer.parseInt(w[5]),
        Integer.parseInt(w[6]), Integer.parseInt(w[7]));
    String method = w[8];
    String arg = w.length > 9 ? w[9] : "";
    byte[] data = w.length > 10 ? hex(w[10]) : new byte[0];
    synchronized (LOCK) {
      if (!a.settled() || a.state.equals("pending")) {
        return "error\t" + a.name + " is still in a call";
      }
      a.state = "running";
      a.answer = "";
      Thread t = new Thread(() -> {
        CURRENT.set(a);
        String state;
        String answer;
        if (a.crashed) {
          state = "failed";
          answer = "IOException: injected crash of " + a.name;
        } else {
          try {
            answer = backend.run(a.name, () -> invoke(a, method, arg, data));
            state = "done";
          } catch (Throwable e) {
            answer = oneLine(e);
            state = "failed";
          }
        }
        synchronized (LOCK) {
          a.state = state;
          a.answer = answer;
          LOCK.notifyAll();
        }
      }, "actor-" + a.name);
      t.setDaemon(true);
      a.thread = t;
      t.start();
      return settle(a);
    }
  }

  private static String step(String name, String how) throws Exception {
    Actor a = ACTORS.get(name);
    if (a == null) {
      return "error\tno actor " + name;
    }
    boolean crash = how.equals("crash");
    synchronized (LOCK) {
      if (crash) {
        a.crashed = true;
      }
      if (!a.state.equals("pending")) {
        return !how.equals("step") ? "failed\tIOException: " + how + " of " + name
            : "error\t" + name + " is not at a filesystem call";
      }
      a.killed = how.equals("kill");
      a.state = "running";
      a.permit = how.equals("step");
      LOCK.notifyAll();
      return settle(a);
    }
  }

  /** How long a reset waits for an ended scenario's call threads to finish. */
  private static final long END_MS = 10_000;

  private static String reset() throws InterruptedException {
    List<String> names;
    List<Thread> threads = new ArrayList<>();
    synchronized (LOCK) {
      for (Actor a : ACTORS.values()) {
        a.crashed = true;  // a blocked thread throws and ends
        if (a.thread != null) {
          threads.add(a.thread);
        }
      }
      LOCK.notifyAll();
      names = new ArrayList<>(ACTORS.keySet());
    }
    // every call of the ended scenario is over before the next one starts: an actor of the
    // next scenario may have the same name (and, on S3A, the same filesystem)
    long deadline = System.currentTimeMillis() + END_MS;
    for (Thread t : threads) {
      t.join(Math.max(1, deadline - System.currentTimeMillis()));
    }
    backend.reset(names);
    synchronized (LOCK) {
      ACTORS.clear();
    }
    OPTIONS.clear();
    return "ok";
  }

  private static String files(String dir) throws IOException {
    StringBuilder s = new StringBuilder("files");
    List<String> found = new ArrayList<>();
    backend.walk(dir, found);
    for (String f : found) {
      s.append('\t').append(f);
    }
    return s.toString();
  }

  private static void walk(File dir, String rel, List<String> found) {
    File[] children = dir.listFiles();
    if (children == null) {
      return;
    }
    java.util.Arrays.sort(children);
    for (File c : children) {
      String r = rel.isEmpty() ? c.getName() : rel + "/" + c.getName();
      if (c.isDirectory()) {
        found.add(r + "/");
        walk(c, r, found);
      } else {
        try {
          found.add(r + "=" + hex(java.nio.file.Files.readAllBytes(c.toPath())));
        } catch (IOException e) {
          found.add(r + "=?");
        }
      }
    }
  }

  static byte[] hex(String s) {
    byte[] out = new byte[s.length() / 2];
    for (int i = 0; i < out.length; i++) {
      out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
    }
    return out;
  }

  static String hex(byte[] b) {
    StringBuilder s = new StringBuilder();
    for (byte x : b) {
      s.append(String.format("%02x", x));
    }
    return s.toString();
  }

  private static String handle(String line) throws Exception {
    String[] w = line.split("\t", -1);
    switch (w[0]) {
      case "reset":
        return reset();
      case "option":
        OPTIONS.put(w[1], w[2]);
        return "ok";
      case "call":
        return call(w);
      case "step":
      case "crash":
      case "kill":
        return step(w[1], w[0]);
      case "files":
        return files(w[1]);
      case "mkdirs":
        backend.mkdirs(w[1]);
        return "ok";
      case "remove":
        backend.remove(w[1]);
        return "ok";
      case "ping":
        return "ok";
      default: {
        String answer = backend.command(w);
        return answer != null ? answer : "error\tunknown command " + w[0];
      }
    }
  }

  public static void main(String[] args) throws Exception {
    serve(new HdfsLike());
  }

  /** Answer commands from stdin, one a line, with committers of {@code chosen}. */
  static void serve(Backend chosen) throws Exception {
    backend = chosen;
    pinXmlFactories();
    PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out),
        true, StandardCharsets.UTF_8);
    System.setOut(System.err);  // Hadoop's logging must not reach the answers
    HdfsLikeFileSystem.hook = CommitDriver::before;
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in,
        StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      String answer;
      try {
        answer = handle(line);
      } catch (Throwable e) {
        answer = "error\t" + oneLine(e);
      }
      out.println(answer);
    }
  }

  /**
   * Look up the StAX factories once, and name what was found in the system properties that
   * the lookup reads first: the AWS SDK makes a new {@code XMLInputFactory} for every
   * response, and each lookup otherwise searches every jar of the class path (some 280 here)
   * for a service file, about 2 ms of CPU per S3 request.  The classes are the ones the
   * lookup finds (Hadoop's shaded Woodstox with PySpark's jars), so nothing else changes.
   */
  static void pinXmlFactories() {
    if (System.getProperty("javax.xml.stream.XMLInputFactory") == null) {
      System.setProperty("javax.xml.stream.XMLInputFactory",
          javax.xml.stream.XMLInputFactory.newFactory().getClass().getName());
    }
    if (System.getProperty("javax.xml.stream.XMLOutputFactory") == null) {
      System.setProperty("javax.xml.stream.XMLOutputFactory",
          javax.xml.stream.XMLOutputFactory.newFactory().getClass().getName());
    }
  }

  /** The model's schedules call {@code cleanupJob} as MapReduce's job runner still does: it is
   * deprecated in the API, not in the protocol under test. */
  @SuppressWarnings("deprecation")
  private static void cleanupJob(Actor a) throws IOException {
    a.committer.cleanupJob(a.job);
  }
}
