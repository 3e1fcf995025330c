pub async fn handler() {
    std::thread::sleep(std::time::Duration::from_millis(5)); // expect: NB0201
}
