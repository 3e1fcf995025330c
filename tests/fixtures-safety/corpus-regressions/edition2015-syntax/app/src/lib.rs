pub async fn handler() {
    old::wait(); // expect: NB0201 via=old
}
