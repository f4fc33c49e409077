------------------------------ MODULE V2Commit ------------------------------
(***************************************************************************)
(* Hadoop FileOutputCommitter algorithm v2 (paper Section III.C) on an     *)
(* object store, where rename is the connector's COPY + DELETE of each     *)
(* file and listings come from the store's index.  Task commit merges the  *)
(* task attempt's files straight into the destination (mergePathsV2), so   *)
(* it is not atomic; job commit only touches _SUCCESS.                     *)
(***************************************************************************)
EXTENDS Harness

\* destPath/_temporary/jobAttemptId/taskAttemptId/f
Temp(t, a, f) == <<"_temporary", t, a, f>>
TaskAttemptPath(t, a) == {Temp(t, a, f) : f \in Files}

AllKeys == OutKeys \cup UNION {TaskAttemptPath(x[1], x[2]) : x \in TA}
AllData == SUBSET (Tasks \X Attempts \X Files)

\* keys whose lag matters: the listing of task attempt paths
\* (the lag of other keys changes no read, so Sync is left out for them)
SyncKeys == UNION {TaskAttemptPath(x[1], x[2]) : x \in TA}

Store == INSTANCE ObjectStore WITH Keys <- AllKeys, Data <- AllData, Uploads <- {}

vars == <<storeVars, harnessVars>>

(* setupJob, setupTask: mkdir, and directories are implicit in the store *)

\* user code writes f in the task working directory
Write(t, a, f) ==
  /\ CanStep(t, a)
  /\ pc[t, a] = "running"
  /\ f \notin wrote[t, a]
  /\ Store!Put(Temp(t, a, f), Bytes(t, a, f))
  /\ wrote' = [wrote EXCEPT ![t, a] = @ \cup {f}]
  /\ UNCHANGED <<pc, todo, granted, dead, accepted, job, jtodo, snap, faults>>

\* needsTaskCommit, ask the driver, and on permission start commitTask:
\* mergePathsV2 lists the task attempt path (through the lagging index)
CommitTask(t, a) ==
  /\ CanStep(t, a)
  /\ pc[t, a] = "running"
  /\ wrote[t, a] # {}
  /\ IF MayCommit(t, a)
       THEN LET listing == {k[4] : k \in Store!List(TaskAttemptPath(t, a))}
            IN  /\ Grant(t, a)
                /\ todo' = [todo EXCEPT ![t, a] = listing]
                /\ pc' = [pc EXCEPT ![t, a] = IF listing = {} THEN "reporting"
                                                              ELSE "merging"]
       ELSE Denied(t, a)
  /\ UNCHANGED <<storeVars, wrote, dead, accepted, job, jtodo, snap, faults>>

\* mergePathsV2, one file: delete the destination if it exists, then rename
MergeFile(t, a, f) ==
  /\ CanStep(t, a)
  /\ pc[t, a] = "merging"
  /\ f \in todo[t, a]
  /\ Store!Rename(Temp(t, a, f), Out(t, f))
  /\ todo' = [todo EXCEPT ![t, a] = @ \ {f}]
  /\ pc' = [pc EXCEPT ![t, a] = IF todo[t, a] = {f} THEN "reporting" ELSE "merging"]
  /\ UNCHANGED <<wrote, granted, dead, accepted, job, jtodo, snap, faults>>

\* Procedure v2 commitJob: touch _SUCCESS, delete _temporary (names that
\* readers ignore, so left out)
CommitJob ==
  /\ job = "running"
  /\ AllAccepted
  /\ job' = "committed"
  /\ snap' = DestView
  /\ UNCHANGED <<storeVars, pc, wrote, todo, granted, dead, accepted, jtodo, faults>>

\* Procedure v1.abortJob / cleanupJob: delete _temporary; what task
\* commits already merged into the destination stays there
AbortJob ==
  /\ job = "running"
  /\ job' = "aborted"
  /\ UNCHANGED <<storeVars, pc, wrote, todo, granted, dead, accepted, jtodo, snap, faults>>

Init == Store!Init /\ HarnessInit

Next ==
  \/ DriverNext
  \/ \E t \in Tasks, a \in Attempts :
       \/ CommitTask(t, a)
       \/ \E f \in Files : Write(t, a, f) \/ MergeFile(t, a, f)
  \/ CommitJob \/ AbortJob
  \/ \E k \in SyncKeys : Store!Sync(k) /\ UNCHANGED harnessVars

Spec == Init /\ [][Next]_vars

TypeOK ==
  /\ Store!TypeOK
  /\ HarnessTypeOK
  /\ pc \in [TA -> {"idle", "running", "merging", "reporting", "committed", "stopped"}]
  /\ todo \in [TA -> SUBSET Files]
  /\ jtodo = {}
==============================================================================
