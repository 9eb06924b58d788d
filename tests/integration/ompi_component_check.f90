! The Fortran (`use mpi`) twin of ompi_component_check.c's check mode, for coll/collsel:
!   ompi_component_check_f check COLL M [M ...]
! COLL bcast (MPI_BYTE, root 0), reduce (root 0) or allreduce (MPI_INTEGER1, MPI_SUM): m is the
! count. "check COLL m=M ok|FAIL" per size on rank 0; the flags travel by MPI_Send/MPI_Recv.
program ompi_component_check_f
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, a, m, i, r, good, other
  integer(kind=1), allocatable :: inb(:), outb(:)
  character(len=32) :: mode, coll, arg
  logical :: all_good

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call get_command_argument(1, mode)
  call get_command_argument(2, coll)
  all_good = .true.
  do a = 3, command_argument_count()
    call get_command_argument(a, arg)
    read (arg, *) m
    allocate (inb(max(m, 1)), outb(max(m, 1)))
    do i = 1, m
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
    case default
      call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
    end select
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
  if (trim(mode) /= 'check') all_good = .false.
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
end program ompi_component_check_f
