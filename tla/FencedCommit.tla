----------------------------- MODULE FencedCommit -----------------------------
(***************************************************************************)
(* The fenced committer (model/zerorename_model/systems/protocols/fenced.py): S3's *)
(* conditional writes (If-None-Match: * ) fence task and job commit.       *)
(*                                                                         *)
(* A task attempt uploads each file to its final key, not completed.  Its  *)
(* task commit is one conditional PUT of the task's record (its uploads)   *)
(* at a key made of the task ID only: the first attempt wins.  A loser     *)
(* (412) reads the record, aborts its own uploads and reports the winner,  *)
(* which the driver accepts.  A winner then reads the job commit record:   *)
(* if it exists without it, the winner aborts its uploads and fails.       *)
(*                                                                         *)
(* Job commit: read the job commit record (an earlier job attempt may have *)
(* written it: roll forward); else take the task records (Spark: the       *)
(* accepted attempts' messages; Hadoop: a LIST of the records), PUT the    *)
(* job record conditionally (the commit point), complete its uploads, then *)
(* clean up (abort stray uploads, delete the task records; the job record  *)
(* stays).  A driver restart keeps the accepted tasks (recovery) and kills *)
(* every attempt it can reach.  Fence = FALSE is the same protocol with    *)
(* plain PUTs (the model's fenced+no-fence).                               *)
(***************************************************************************)
EXTENDS Harness

CONSTANTS JobCommit,    \* "hadoop" (list the task records) or "spark" (messages)
          Fence,        \* TRUE: records are PUT with If-None-Match: *
          MaxRestarts   \* driver restarts (new job attempts) in one run

ASSUME JobCommit \in {"hadoop", "spark"} /\ Fence \in BOOLEAN /\ MaxRestarts \in Nat

VARIABLES claim,      \* [TA -> Attempts \cup {NoAttempt}]: whom a task commit reports
          jstage,     \* the driver's place in commitJob
          restarts    \* restarts so far

fencedVars == <<claim, jstage, restarts>>

Upload(t, a, f) == <<t, a, f>>
AllUploads == Tasks \X Attempts \X Files
\* dest/_fenced/<jobId>/tasks/<taskId>.json and dest/_fenced/<jobId>/commit.json
TaskRecord(t) == <<"_fenced", "tasks", t>>
TaskRecords == {TaskRecord(t) : t \in Tasks}
JobRecord == <<"_fenced", "commit">>
AllKeys == OutKeys \cup TaskRecords \cup {JobRecord}
AllData == SUBSET AllUploads

Store == INSTANCE ObjectStore WITH Keys <- AllKeys, Data <- AllData, Uploads <- AllUploads

vars == <<storeVars, harnessVars, fencedVars>>

\* the uploads an attempt has started (its record, once it commits)
Mine(t, a) == {Upload(t, a, f) : f \in wrote[t, a]}
\* the attempt that wrote a record (every record names one attempt's uploads)
Owner(r) == CHOOSE a \in Attempts : \E u \in r : u[2] = a
\* abort every upload in U that is still open (one already gone is no error)
AbortOpen(U) == Store!AbortAll({u \in U : uploads[u].st = "open"})

\* a conditional PUT that finds the key taken changes nothing (412)
PutRecord(k, d) == IF Fence THEN Store!PutIfAbsent(k, d) ELSE Store!Put(k, d)
Taken(k) == Fence /\ objs[k] # Absent

(* Task side *)

\* the output stream starts the file's multipart upload to its final key
Write(t, a, f) ==
  /\ CanStep(t, a)
  /\ pc[t, a] = "running"
  /\ f \notin wrote[t, a]
  /\ Store!StartUpload(Upload(t, a, f), Out(t, f), Bytes(t, a, f))
  /\ wrote' = [wrote EXCEPT ![t, a] = @ \cup {f}]
  /\ UNCHANGED <<pc, todo, granted, dead, accepted, job, jtodo, snap, faults, fencedVars>>

\* needsTaskCommit, then ask the driver; a denied attempt stops (its open
\* uploads are aborted by the job's cleanup)
CommitTask(t, a) ==
  /\ CanStep(t, a)
  /\ pc[t, a] = "running"
  /\ wrote[t, a] # {}
  /\ IF MayCommit(t, a)
       THEN /\ Grant(t, a)
            /\ pc' = [pc EXCEPT ![t, a] = "putting"]
            /\ UNCHANGED todo
       ELSE Denied(t, a)
  /\ UNCHANGED <<storeVars, wrote, dead, accepted, job, jtodo, snap, faults, fencedVars>>

\* the task commit: PUT the task record, If-None-Match: *
PutTaskRecord(t, a) ==
  /\ CanStep(t, a)
  /\ pc[t, a] = "putting"
  /\ IF Taken(TaskRecord(t))
       THEN /\ pc' = [pc EXCEPT ![t, a] = "lost"]
            /\ UNCHANGED storeVars
       ELSE /\ PutRecord(TaskRecord(t), Mine(t, a))
            /\ pc' = [pc EXCEPT ![t, a] = "checking"]
  /\ UNCHANGED <<wrote, todo, granted, dead, accepted, job, jtodo, snap, faults, fencedVars>>

\* 412: read the record; another attempt's means that attempt committed the
\* task: abort our uploads, report the winner
ReadWinner(t, a) ==
  /\ CanStep(t, a)
  /\ pc[t, a] = "lost"
  /\ LET r == Store!Get(TaskRecord(t)) IN
       IF r = Absent
         THEN /\ AbortOpen(Mine(t, a))      \* the job ended and deleted it
              /\ pc' = [pc EXCEPT ![t, a] = "stopped"]
              /\ UNCHANGED claim
         ELSE /\ AbortOpen(Mine(t, a))
              /\ claim' = [claim EXCEPT ![t, a] = Owner(r)]
              /\ pc' = [pc EXCEPT ![t, a] = "reporting"]
  /\ UNCHANGED <<wrote, todo, granted, dead, accepted, job, jtodo, snap, faults, jstage,
                 restarts>>

\* the record is ours: read the job commit record; one that exists and does
\* not hold our uploads means the job committed without us
CheckJobRecord(t, a) ==
  /\ CanStep(t, a)
  /\ pc[t, a] = "checking"
  /\ LET j == Store!Get(JobRecord) IN
       IF j # Absent /\ ~(Mine(t, a) \subseteq j)
         THEN /\ AbortOpen(Mine(t, a))
              /\ pc' = [pc EXCEPT ![t, a] = "stopped"]
              /\ UNCHANGED claim
         ELSE /\ claim' = [claim EXCEPT ![t, a] = a]
              /\ pc' = [pc EXCEPT ![t, a] = "reporting"]
              /\ UNCHANGED storeVars
  /\ UNCHANGED <<wrote, todo, granted, dead, accepted, job, jtodo, snap, faults, jstage,
                 restarts>>

\* commitTask returned: the driver records the attempt it names as the
\* task's committed one, unless it considers the reporter failed
ReportClaim(t, a) ==
  /\ CanStep(t, a)
  /\ pc[t, a] = "reporting"
  /\ pc' = [pc EXCEPT ![t, a] = "committed"]
  /\ accepted' = IF <<t, a>> \in dead \/ accepted[t] # NoAttempt THEN accepted
                 ELSE [accepted EXCEPT ![t] = claim[t, a]]
  /\ UNCHANGED <<storeVars, wrote, todo, granted, dead, job, jtodo, snap, faults, fencedVars>>

(* Driver side *)

\* the task records the job commits: Spark's messages, or Hadoop's listing
Chosen == IF JobCommit = "spark"
            THEN UNION {Mine(t, accepted[t]) : t \in Tasks}
            ELSE UNION {Store!Get(k) : k \in Store!List(TaskRecords)}

\* Procedure commitJob: read the job record; roll forward from it if an
\* earlier job attempt wrote it
CommitJob ==
  /\ job = "running"
  /\ jstage = "idle"
  /\ AllAccepted
  /\ job' = "committing"
  /\ LET j == Store!Get(JobRecord) IN
       IF j # Absent
         THEN /\ jtodo' = j
              /\ jstage' = "completing"
         ELSE /\ jtodo' = Chosen
              /\ jstage' = "putting"
  /\ UNCHANGED <<storeVars, pc, wrote, todo, granted, dead, accepted, snap, faults, claim,
                 restarts>>

\* ... PUT the job commit record, If-None-Match: * (the commit point); a 412
\* means an earlier attempt committed: roll forward from its record
PutJobRecord ==
  /\ job = "committing"
  /\ jstage = "putting"
  /\ IF Taken(JobRecord)
       THEN /\ jtodo' = Store!Get(JobRecord)
            /\ UNCHANGED storeVars
       ELSE /\ PutRecord(JobRecord, jtodo)
            /\ UNCHANGED jtodo
  /\ jstage' = "completing"
  /\ UNCHANGED <<pc, wrote, todo, granted, dead, accepted, job, snap, faults, claim, restarts>>

\* ... complete each upload; one already completed is done
CompleteUpload(u) ==
  /\ job = "committing"
  /\ jstage = "completing"
  /\ u \in jtodo
  /\ uploads[u].st # "aborted"
  /\ IF uploads[u].st = "open" THEN Store!Complete(u) ELSE UNCHANGED storeVars
  /\ jtodo' = jtodo \ {u}
  /\ UNCHANGED <<pc, wrote, todo, granted, dead, accepted, job, snap, faults, fencedVars>>

\* commitJob returns (_SUCCESS names what the destination holds)
EndCommitJob ==
  /\ job = "committing"
  /\ jstage = "completing"
  /\ jtodo = {}
  /\ job' = "committed"
  /\ jstage' = "cleanup"
  /\ snap' = DestView
  /\ UNCHANGED <<storeVars, pc, wrote, todo, granted, dead, accepted, jtodo, faults, claim,
                 restarts>>

\* cleanupJob: abort the uploads no record names, then delete the task
\* records (two requests)
CleanupUploads ==
  /\ job = "committed"
  /\ jstage = "cleanup"
  /\ Store!AbortAll(Store!ListUploads(OutKeys))
  /\ jstage' = "cleanup-records"
  /\ UNCHANGED <<pc, wrote, todo, granted, dead, accepted, job, jtodo, snap, faults, claim,
                 restarts>>

CleanupRecord(k) ==
  /\ job = "committed"
  /\ jstage = "cleanup-records"
  /\ k \in Store!List(TaskRecords)
  /\ Store!Delete(k)
  /\ UNCHANGED <<pc, wrote, todo, granted, dead, accepted, job, jtodo, snap, faults,
                 fencedVars>>

\* abortJob (no job record yet: roll back): abort every upload under the
\* destination and delete the task records
AbortJob ==
  /\ job = "running"
  /\ Store!Get(JobRecord) = Absent
  /\ Store!AbortAll(Store!ListUploads(OutKeys))
  /\ job' = "aborted"
  /\ UNCHANGED <<pc, wrote, todo, granted, dead, accepted, jtodo, snap, faults, fencedVars>>

AbortRecord(k) ==
  /\ job = "aborted"
  /\ k \in Store!List(TaskRecords)
  /\ Store!Delete(k)
  /\ UNCHANGED <<pc, wrote, todo, granted, dead, accepted, job, jtodo, snap, faults,
                 fencedVars>>

\* the driver dies before its job commit returned; the next job attempt
\* keeps the accepted tasks (their records name no job attempt) and YARN
\* kills every attempt the driver could reach (zombies keep running)
Restart ==
  /\ restarts < MaxRestarts
  /\ job \in {"running", "committing"}
  /\ LET reachable == {x \in TA : Alive(x[1], x[2]) /\ x \notin dead} IN
       /\ pc' = [x \in TA |-> IF x \in reachable THEN "stopped" ELSE pc[x]]
       /\ dead' = dead \cup reachable
  /\ granted' = [t \in Tasks |-> NoAttempt]
  /\ job' = "running"
  /\ jstage' = "idle"
  /\ jtodo' = {}
  /\ restarts' = restarts + 1
  /\ UNCHANGED <<storeVars, wrote, todo, accepted, snap, faults, claim>>

Init ==
  /\ Store!Init
  /\ HarnessInit
  /\ claim = [x \in TA |-> NoAttempt]
  /\ jstage = "idle"
  /\ restarts = 0

Next ==
  \/ /\ \E t \in Tasks, a \in Attempts :
          Launch(t, a) \/ Crash(t, a) \/ Partition(t, a)
     /\ UNCHANGED <<storeVars, fencedVars>>
  \/ \E t \in Tasks, a \in Attempts :
       \/ CommitTask(t, a) \/ PutTaskRecord(t, a) \/ ReadWinner(t, a)
       \/ CheckJobRecord(t, a) \/ ReportClaim(t, a)
       \/ \E f \in Files : Write(t, a, f)
  \/ CommitJob \/ PutJobRecord \/ EndCommitJob \/ CleanupUploads \/ AbortJob \/ Restart
  \/ \E u \in AllUploads : CompleteUpload(u)
  \/ \E k \in TaskRecords : CleanupRecord(k) \/ AbortRecord(k)

Spec == Init /\ [][Next]_vars

TypeOK ==
  /\ Store!TypeOK
  /\ HarnessTypeOK
  /\ pc \in [TA -> {"idle", "running", "putting", "lost", "checking", "reporting",
                    "committed", "stopped"}]
  /\ claim \in [TA -> Attempts \cup {NoAttempt}]
  /\ jstage \in {"idle", "putting", "completing", "cleanup", "cleanup-records"}
  /\ jtodo \subseteq AllUploads
  /\ restarts \in 0..MaxRestarts

\* no upload the job commit record names is ever aborted (so a job that
\* reached its commit point can always complete: roll forward works)
RecordedUploadsLive ==
  objs[JobRecord] # Absent => \A u \in objs[JobRecord] : uploads[u].st # "aborted"
==============================================================================
