! late_sender.F90: the Fortran form of late_sender.c, built twice: with
! 'use mpi' and, with -DWP_F08, with 'use mpi_f08'.  Rank 1
! computes in a module procedure, then sends; rank 0 waits in MPI_RECV,
! called from the module procedure work's receive (so that frames show as
! work::receive, symbols/names.h).
! Prints "truth rank=R in_recv=S in_compute=S".
module work
#ifdef WP_F08
  use mpi_f08
#else
  use mpi
#endif
  implicit none
contains
  subroutine receive(buf)
    integer, intent(inout) :: buf
    integer :: ierr
#ifdef WP_F08
    type(MPI_Status) :: status
#else
    integer :: status(MPI_STATUS_SIZE)
#endif
    call MPI_RECV(buf, 1, MPI_INTEGER, 1, 0, MPI_COMM_WORLD, status, ierr)
  end subroutine
  subroutine compute_loop(sec, x)
    double precision, intent(in) :: sec
    double precision, intent(inout) :: x
    double precision :: t0
    integer :: i
    t0 = mpi_wtime_now()
    do while (mpi_wtime_now() - t0 < sec)
      do i = 1, 1000
        x = x + i * 1d-9
      end do
    end do
  end subroutine
  double precision function mpi_wtime_now()
    integer(8) :: c, r
    call system_clock(c, r)
    mpi_wtime_now = dble(c) / dble(r)
  end function
end module

program late_sender
#ifdef WP_F08
  use mpi_f08
#else
  use mpi
#endif
  use work
  implicit none
  integer :: ierr, rank, it, buf, iter
  double precision :: delay, t0, in_recv, in_compute, x
  character(len=32) :: arg
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  delay = 0.2d0
  iter = 5
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) delay
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) iter
  end if
  in_recv = 0; in_compute = 0; x = 0; buf = 0
  do it = 1, iter
    t0 = mpi_wtime_now()
    if (rank == 0) then
      call receive(buf)
      in_recv = in_recv + (mpi_wtime_now() - t0)
    else if (rank == 1) then
      call compute_loop(delay, x)
      in_compute = in_compute + (mpi_wtime_now() - t0)
      call MPI_SEND(buf, 1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, ierr)
    end if
  end do
  write (*, '(a,i0,a,f0.6,a,f0.6)') 'truth rank=', rank, ' in_recv=', in_recv, ' in_compute=', in_compute
  call MPI_FINALIZE(ierr)
end program
