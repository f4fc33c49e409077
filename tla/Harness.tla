------------------------------- MODULE Harness -------------------------------
(***************************************************************************)
(* What every commit protocol spec shares: task attempts, the job driver,  *)
(* faults, and the correctness properties of paper Section VIII as         *)
(* docs/research/design.md defines them.  A protocol module EXTENDS this one, adds  *)
(* its procedures, and INSTANCEs ObjectStore over the variables below.     *)
(*                                                                         *)
(* Attempts (Section II, II.B): attempt 1 of every task starts running; a  *)
(* second attempt (a retry or a speculative duplicate) may be launched     *)
(* while the task has no accepted attempt.  An attempt may crash (it       *)
(* stops), or be partitioned: the driver considers it failed but it keeps  *)
(* running (a "zombie"); at most MaxFaults faults happen in a run.         *)
(*                                                                         *)
(* Commit permission follows Spark's OutputCommitCoordinator (Section IV): *)
(* the first attempt to ask wins while it is alive; an attempt the driver  *)
(* considers failed releases it.  The driver accepts an attempt when its   *)
(* commitTask returns and the driver does not consider it failed.  Once    *)
(* the job stops running, the driver kills the attempts it can reach; only *)
(* zombies still take steps.                                               *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets, TLC

CONSTANTS Tasks,        \* task ids
          Attempts,     \* attempt numbers of each task, a subset of 1..9
          Files,        \* names of the files an attempt may write
          Partitions,   \* TRUE: attempts may be partitioned (become zombies)
          MaxFaults,    \* crashes plus partitions in one run
          Consistency,  \* of the object store: "strong" or "eventual"
          Absent        \* model value

ASSUME Partitions \in BOOLEAN /\ MaxFaults \in Nat /\ Attempts \subseteq 1..9

\* the object store's variables (see ObjectStore)
VARIABLES objs, seen, listed, uploads, lastWrite
\* task attempts and the job driver
VARIABLES pc,         \* [Tasks \X Attempts -> state of the attempt]
          wrote,      \* [Tasks \X Attempts -> SUBSET Files]: files it wrote
          todo,       \* [Tasks \X Attempts -> work left in its task commit]
          granted,    \* [Tasks -> Attempts \cup {NoAttempt}]: commit permission
          dead,       \* attempts the driver considers failed
          accepted,   \* [Tasks -> Attempts \cup {NoAttempt}]: committed attempt
          job,        \* "running", "committing", "committed" or "aborted"
          jtodo,      \* work left in the job commit
          snap,       \* the destination when commitJob returned
          faults      \* faults so far

storeVars == <<objs, seen, listed, uploads, lastWrite>>
harnessVars == <<pc, wrote, todo, granted, dead, accepted, job, jtodo, snap, faults>>

NoAttempt == 0
TA == Tasks \X Attempts

(***************************************************************************)
(* Output.  Output file f of task t has the same name in every attempt     *)
(* (Spark's part-<task>-<job uuid>); its bytes name the attempt.  Every    *)
(* object's content is a set of triples (TLC compares values of one kind   *)
(* only): a data file holds {<<t, a, f>>}; a manifest holds upload ids,    *)
(* which are triples too.  Names beginning with _ or . (_temporary,        *)
(* __magic, _SUCCESS) are not output, so OutKeys are the only keys a       *)
(* reader of the destination sees.                                         *)
(***************************************************************************)
Out(t, f) == <<"part", t, f>>
OutKeys == {Out(t, f) : t \in Tasks, f \in Files}
Bytes(t, a, f) == {<<t, a, f>>}
OutData == {Bytes(t, a, f) : t \in Tasks, a \in Attempts, f \in Files}

\* the destination as a reader sees it once the store has settled
\* (Section VIII.B: "a sufficient delay" for the listings to be consistent)
DestView == [k \in OutKeys |-> objs[k]]

HarnessInit ==
  /\ pc = [x \in TA |-> IF x[2] = 1 THEN "running" ELSE "idle"]
  /\ wrote = [x \in TA |-> {}]
  /\ todo = [x \in TA |-> {}]
  /\ granted = [t \in Tasks |-> NoAttempt]
  /\ dead = {}
  /\ accepted = [t \in Tasks |-> NoAttempt]
  /\ job = "running"
  /\ jtodo = {}
  /\ snap = [k \in OutKeys |-> Absent]
  /\ faults = 0

HarnessTypeOK ==
  /\ wrote \in [TA -> SUBSET Files]
  /\ granted \in [Tasks -> Attempts \cup {NoAttempt}]
  /\ dead \subseteq TA
  /\ accepted \in [Tasks -> Attempts \cup {NoAttempt}]
  /\ job \in {"running", "committing", "committed", "aborted"}
  /\ snap \in [OutKeys -> {Absent} \cup OutData]
  /\ faults \in 0..MaxFaults

Alive(t, a) == pc[t, a] \notin {"idle", "committed", "stopped"}

\* the attempt may take its next step
CanStep(t, a) == Alive(t, a) /\ (job = "running" \/ <<t, a>> \in dead)

\* OutputCommitCoordinator.handleAskPermissionToCommitTask
MayCommit(t, a) == <<t, a>> \notin dead /\ granted[t] \in {NoAttempt, a}

Grant(t, a) == granted' = [granted EXCEPT ![t] = a]

\* the driver considers <<t, a>> failed and releases its permission
MarkDead(t, a) ==
  /\ dead' = dead \cup {<<t, a>>}
  /\ granted' = IF granted[t] = a THEN [granted EXCEPT ![t] = NoAttempt] ELSE granted

\* a retry, or a speculative duplicate
Launch(t, a) ==
  /\ job = "running"
  /\ pc[t, a] = "idle"
  /\ accepted[t] = NoAttempt
  /\ pc' = [pc EXCEPT ![t, a] = "running"]
  /\ UNCHANGED <<wrote, todo, granted, dead, accepted, job, jtodo, snap, faults>>

Crash(t, a) ==
  /\ CanStep(t, a)
  /\ faults < MaxFaults
  /\ pc' = [pc EXCEPT ![t, a] = "stopped"]
  /\ MarkDead(t, a)
  /\ faults' = faults + 1
  /\ UNCHANGED <<wrote, todo, accepted, job, jtodo, snap>>

\* the driver loses the attempt, which keeps running
Partition(t, a) ==
  /\ Partitions
  /\ CanStep(t, a)
  /\ <<t, a>> \notin dead
  /\ faults < MaxFaults
  /\ MarkDead(t, a)
  /\ faults' = faults + 1
  /\ UNCHANGED <<pc, wrote, todo, accepted, job, jtodo, snap>>

\* commitTask returned: the driver records the task as committed unless it
\* considers the attempt failed (then the success message is lost)
Report(t, a) ==
  /\ CanStep(t, a)
  /\ pc[t, a] = "reporting"
  /\ pc' = [pc EXCEPT ![t, a] = "committed"]
  /\ accepted' = IF <<t, a>> \in dead THEN accepted ELSE [accepted EXCEPT ![t] = a]
  /\ UNCHANGED <<wrote, todo, granted, dead, job, jtodo, snap, faults>>

\* permission denied (or the request never reached the driver): abortTask
Denied(t, a) ==
  /\ pc' = [pc EXCEPT ![t, a] = "stopped"]
  /\ UNCHANGED <<granted, todo>>

AllAccepted == \A t \in Tasks : accepted[t] # NoAttempt

DriverNext ==
  /\ \E t \in Tasks, a \in Attempts :
       Launch(t, a) \/ Crash(t, a) \/ Partition(t, a) \/ Report(t, a)
  /\ UNCHANGED storeVars

(***************************************************************************)
(* Correctness (Section VIII.A, docs/research/design.md "Properties"), on the       *)
(* reader's view of the destination.  The destination starts empty.        *)
(***************************************************************************)
\* after commitJob returns, every file written by an accepted attempt is
\* in the destination with exactly its bytes: "you get what was committed"
Completeness ==
  job = "committed" =>
    \A t \in Tasks : \A f \in wrote[t, accepted[t]] :
      snap[Out(t, f)] = Bytes(t, accepted[t], f)

\* after commitJob returns, the destination holds only output of accepted
\* attempts (so never a mix of two attempts of a task): "and not what wasn't"
Exclusivity ==
  job = "committed" =>
    \A t \in Tasks, f \in Files :
      \/ snap[Out(t, f)] = Absent
      \/ snap[Out(t, f)] = Bytes(t, accepted[t], f)

\* after abortJob and cleanupJob, no output of the job appears in the
\* destination, now or later
Abortability ==
  job = "aborted" => \A k \in OutKeys : objs[k] = Absent

\* after commitJob returns, no attempt still running changes the destination
Continuity ==
  job = "committed" => DestView = snap

\* sanity check, expected to be violated: a job can commit at all
NeverCommits == job # "committed"
==============================================================================
