! An unmodified Fortran program that checks collectives, for libcollsel and coll/collsel: `use
! mpi` as it is, `use mpi_f08` when compiled with -DF08 (the calls read the same in both).
!   coll_check_fortran [check] COLL M [M ...] [COLL M [M ...] ...]
! A word names the collective of the sizes after it ("check" is skipped): bcast (MPI_BYTE, root
! 0), reduce (MPI_INTEGER1, MPI_SUM, root 0), allreduce (the same), allreduce_in_place
! (MPI_IN_PLACE), allgather, alltoall (MPI_BYTE, M bytes per rank's block). Rank 0 prints
! "check COLL m=M ok|FAIL" per call; the flags travel by MPI_Send/MPI_Recv.
program coll_check_fortran
#ifdef F08
  use mpi_f08
#else
  use mpi
#endif
  implicit none
  integer :: ierr, rank, nprocs, a, m, i, q, r, good, other, status
  integer(kind=1), allocatable :: inb(:), outb(:)
  character(len=32) :: coll, arg
  logical :: all_good

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  all_good = .true.
  coll = ''
  do a = 1, command_argument_count()
    call get_command_argument(a, arg)
    read (arg, *, iostat=status) m
    if (status /= 0) then
      if (trim(arg) /= 'check') coll = arg
      cycle
    end if
    allocate (inb(max(m, 1) * nprocs), outb(max(m, 1) * nprocs))
    do i = 1, m * nprocs
      inb(i) = int(pattern(i, rank), kind=1)
      outb(i) = 0
    end do
    good = 1
    select case (trim(coll))
    case ('bcast')
      call MPI_Bcast(inb, m, MPI_BYTE, 0, MPI_COMM_WORLD, ierr)
      do i = 1, m
        if (inb(i) /= pattern(i, 0)) good = 0
      end do
    case ('reduce')
      call MPI_Reduce(inb, outb, m, MPI_INTEGER1, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
      if (rank == 0) then
        do i = 1, m
          if (outb(i) /= summed(i)) good = 0
        end do
      end if
    case ('allreduce')
      call MPI_Allreduce(inb, outb, m, MPI_INTEGER1, MPI_SUM, MPI_COMM_WORLD, ierr)
      do i = 1, m
        if (outb(i) /= summed(i)) good = 0
      end do
    case ('allreduce_in_place')
      call MPI_Allreduce(MPI_IN_PLACE, inb, m, MPI_INTEGER1, MPI_SUM, MPI_COMM_WORLD, ierr)
      do i = 1, m
        if (inb(i) /= summed(i)) good = 0
      end do
    case ('allgather')
      call MPI_Allgather(inb, m, MPI_BYTE, outb, m, MPI_BYTE, MPI_COMM_WORLD, ierr)
      do q = 0, nprocs - 1
        do i = 1, m
          if (outb(q * m + i) /= pattern(i, q)) good = 0
        end do
      end do
    case ('alltoall')
      ! rank q's block for this rank is pattern(rank * m + i, q)
      call MPI_Alltoall(inb, m, MPI_BYTE, outb, m, MPI_BYTE, MPI_COMM_WORLD, ierr)
      do q = 0, nprocs - 1
        do i = 1, m
          if (outb(q * m + i) /= pattern(rank * m + i, q)) good = 0
        end do
      end do
    case default
      call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
    end select
    if (ierr /= MPI_SUCCESS) good = 0
    if (rank /= 0) then
      call MPI_Send(good, 1, MPI_INTEGER, 0, 7, MPI_COMM_WORLD, ierr)
    else
      do r = 1, nprocs - 1
        call MPI_Recv(other, 1, MPI_INTEGER, r, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        good = min(good, other)
      end do
      if (good == 1) then
        write (*, '(a,a,a,i0,a)') 'check ', trim(coll), ' m=', m, ' ok'
      else
        write (*, '(a,a,a,i0,a)') 'check ', trim(coll), ' m=', m, ' FAIL'
      end if
    end if
    all_good = all_good .and. good == 1
    deallocate (inb, outb)
  end do
  call MPI_Finalize(ierr)
  if (.not. all_good) stop 1

contains

  ! Below 31, so a sum over up to 4 ranks fits a signed byte.
  integer function pattern(i, who)
    integer, intent(in) :: i, who
    pattern = mod(i * 131 + who * 7 + 11, 31)
  end function pattern

  integer function summed(i)
    integer, intent(in) :: i
    integer :: q
    summed = 0
    do q = 0, nprocs - 1
      summed = summed + pattern(i, q)
    end do
  end function summed
end program coll_check_fortran
