---------------------------- MODULE ManifestCommit ----------------------------
(***************************************************************************)
(* The manifest committer (model/zerorename_model/systems/protocols/manifest.py;   *)
(* Hadoop's manifest committer for ABFS and GCS).  A task attempt writes   *)
(* its files into its attempt directory under dest/_temporary.  Task      *)
(* commit lists that directory and saves a manifest of what it found:     *)
(* PUT <attemptId>-manifest.json.tmp, DELETE <taskId>-manifest.json,      *)
(* RENAME the one onto the other, so a later attempt of a task replaces    *)
(* an earlier one's manifest.  Job commit lists the manifests directory,  *)
(* loads every manifest and renames each file it names to its final key   *)
(* (file renames only, no directory rename), then deletes _temporary.     *)
(* Like every Hadoop committer its job commit ignores the task messages.   *)
(***************************************************************************)
EXTENDS Harness

Entry(t, a, f) == <<t, a, f>>
Entries == Tasks \X Attempts \X Files
\* dest/_temporary/<jobId>/<NN>/tasks/<taskAttemptId>/f
TaskFile(e) == <<"_temporary", "tasks", e[1], e[2], e[3]>>
TaskAttemptDir(t, a) == {TaskFile(Entry(t, a, f)) : f \in Files}
\* dest/_temporary/<jobId>/<NN>/manifests/<taskId>-manifest.json (and its .tmp)
Manifest(t) == <<"_temporary", "manifests", t>>
TempManifest(t, a) == <<"_temporary", "manifests", t, a>>
ManifestDir == {Manifest(t) : t \in Tasks}
TempKeys == (UNION {TaskAttemptDir(x[1], x[2]) : x \in TA})
              \cup ManifestDir \cup {TempManifest(x[1], x[2]) : x \in TA}
AllKeys == OutKeys \cup TempKeys
\* a data file holds {<<t, a, f>>}, a manifest the set of its entries
AllData == SUBSET Entries

Store == INSTANCE ObjectStore WITH Keys <- AllKeys, Data <- AllData, Uploads <- {}

vars == <<storeVars, harnessVars>>

\* the entry a task file stands for (the key names it)
EntryOf(k) == <<k[3], k[4], k[5]>>

(* Stage task_stage_setup: the attempt directory is implicit *)

Write(t, a, f) ==
  /\ CanStep(t, a)
  /\ pc[t, a] = "running"
  /\ f \notin wrote[t, a]
  /\ Store!Put(TaskFile(Entry(t, a, f)), Bytes(t, a, f))
  /\ wrote' = [wrote EXCEPT ![t, a] = @ \cup {f}]
  /\ UNCHANGED <<pc, todo, granted, dead, accepted, job, jtodo, snap, faults>>

\* needsTaskCommit (always), ask the driver; on permission stage
\* task_stage_scan_directory lists the attempt directory
CommitTask(t, a) ==
  /\ CanStep(t, a)
  /\ pc[t, a] = "running"
  /\ wrote[t, a] # {}
  /\ IF MayCommit(t, a)
       THEN /\ Grant(t, a)
            /\ todo' = [todo EXCEPT ![t, a] =
                          {EntryOf(k) : k \in Store!List(TaskAttemptDir(t, a))}]
            /\ pc' = [pc EXCEPT ![t, a] = "saving"]
       ELSE Denied(t, a)
  /\ UNCHANGED <<storeVars, wrote, dead, accepted, job, jtodo, snap, faults>>

\* stage task_stage_save_manifest: PUT the temporary manifest ...
SaveTempManifest(t, a) ==
  /\ CanStep(t, a)
  /\ pc[t, a] = "saving"
  /\ Store!Put(TempManifest(t, a), todo[t, a])
  /\ pc' = [pc EXCEPT ![t, a] = "deleting"]
  /\ UNCHANGED <<wrote, todo, granted, dead, accepted, job, jtodo, snap, faults>>

\* ... DELETE any manifest of an earlier attempt ...
DeleteManifest(t, a) ==
  /\ CanStep(t, a)
  /\ pc[t, a] = "deleting"
  /\ Store!Delete(Manifest(t))
  /\ pc' = [pc EXCEPT ![t, a] = "renaming"]
  /\ UNCHANGED <<wrote, todo, granted, dead, accepted, job, jtodo, snap, faults>>

\* ... RENAME the temporary manifest onto <taskId>-manifest.json (the commit)
RenameManifest(t, a) ==
  /\ CanStep(t, a)
  /\ pc[t, a] = "renaming"
  /\ Store!Rename(TempManifest(t, a), Manifest(t))
  /\ pc' = [pc EXCEPT ![t, a] = "reporting"]
  /\ UNCHANGED <<wrote, todo, granted, dead, accepted, job, jtodo, snap, faults>>

\* stage job_stage_load_manifests: list manifests/ and load each
CommitJob ==
  /\ job = "running"
  /\ AllAccepted
  /\ job' = "committing"
  /\ jtodo' = UNION {Store!Get(k) : k \in Store!List(ManifestDir)}
  /\ UNCHANGED <<storeVars, pc, wrote, todo, granted, dead, accepted, snap, faults>>

\* stage job_stage_rename_files: one file rename per entry
RenameFile(e) ==
  /\ job = "committing"
  /\ e \in jtodo
  /\ Store!Rename(TaskFile(e), Out(e[1], e[3]))
  /\ jtodo' = jtodo \ {e}
  /\ UNCHANGED <<pc, wrote, todo, granted, dead, accepted, job, snap, faults>>

\* _SUCCESS is saved and commitJob returns (the cleanup stage deletes
\* _temporary: nothing a reader sees)
EndCommitJob ==
  /\ job = "committing"
  /\ jtodo = {}
  /\ job' = "committed"
  /\ snap' = DestView
  /\ UNCHANGED <<storeVars, pc, wrote, todo, granted, dead, accepted, jtodo, faults>>

\* stage job_stage_abort: delete _temporary (one recursive delete)
AbortJob ==
  /\ job = "running"
  /\ Store!Apply([k \in TempKeys |-> Absent], Absent)
  /\ UNCHANGED uploads
  /\ job' = "aborted"
  /\ UNCHANGED <<pc, wrote, todo, granted, dead, accepted, jtodo, snap, faults>>

Init == Store!Init /\ HarnessInit

Next ==
  \/ DriverNext
  \/ \E t \in Tasks, a \in Attempts :
       \/ CommitTask(t, a) \/ SaveTempManifest(t, a) \/ DeleteManifest(t, a)
       \/ RenameManifest(t, a)
       \/ \E f \in Files : Write(t, a, f)
  \/ CommitJob \/ EndCommitJob \/ AbortJob
  \/ \E e \in Entries : RenameFile(e)

Spec == Init /\ [][Next]_vars

TypeOK ==
  /\ Store!TypeOK
  /\ HarnessTypeOK
  /\ pc \in [TA -> {"idle", "running", "saving", "deleting", "renaming", "reporting",
                    "committed", "stopped"}]
  /\ todo \in [TA -> SUBSET Entries]
  /\ jtodo \subseteq Entries
==============================================================================
