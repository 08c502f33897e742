! ws_fforget.F90: a followed receive whose completion waitprof does not
! see, and new requests under its Fortran handle.  2 ranks, ROUNDS rounds
! (default 4: the instances are among the first 16 of their channels,
! which waitprof always follows).  Each round rank 0 posts MPI_IRECV (tag
! 10) and completes it through the C PMPI_Wait (ws_unseen_wait in
! ws_fforget_c.c), which no wrapper sees; then it starts MPI_ISSEND (tag
! 11) and completes it with MPI_WAIT.  Both MPIs give the new request the
! receive's handle (Open MPI the lowest free Fortran handle; a synchronous
! send, unlike an MPI_ISEND that Open MPI completes at once under its one
! static request, makes a request of its own).  waitprof
! must drop the followed receive's entry under that handle when the send's
! request is made (wp_match_fforget), or the MPI_WAIT of the send would be
! taken for the receive's completion and recorded as its instance.  So rank 1's blocking sends of tag 10 stay
! unmatched: rank 1 prints "truth rank=1 unseen=ROUNDS"; rank 0 prints
! "info rank=0 reused=N", the rounds in which the send's request had the
! receive's Fortran handle.
program ws_fforget
  use mpi
  implicit none
  interface
    subroutine ws_unseen_wait(freq) bind(C, name='ws_unseen_wait')
      integer :: freq
    end subroutine
  end interface
  integer :: ierr, rank, size, r, rounds, req, old, reused
  double precision :: x, y
  character(len=32) :: arg
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
  if (size /= 2) call MPI_ABORT(MPI_COMM_WORLD, 2, ierr)
  rounds = 4
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) rounds
  end if
  reused = 0
  x = 1d0
  do r = 1, rounds
    if (rank == 0) then
      call MPI_IRECV(y, 1, MPI_DOUBLE_PRECISION, 1, 10, MPI_COMM_WORLD, req, ierr)
      old = req
      call ws_unseen_wait(req)
      call MPI_ISSEND(x, 1, MPI_DOUBLE_PRECISION, 1, 11, MPI_COMM_WORLD, req, ierr)
      if (req == old) reused = reused + 1
      call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
    else
      call MPI_SEND(x, 1, MPI_DOUBLE_PRECISION, 0, 10, MPI_COMM_WORLD, ierr)
      call MPI_RECV(y, 1, MPI_DOUBLE_PRECISION, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    end if
  end do
  if (rank == 0) write (*, '(a,i0)') 'info rank=0 reused=', reused
  if (rank == 1) write (*, '(a,i0)') 'truth rank=1 unseen=', rounds
  call MPI_FINALIZE(ierr)
end program
